package planner

import (
	"testing"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
)

// cpuListErr and sizeErr are the shared parsers' own messages, which the
// planner wraps rather than rewords.
func cpuListErr(t *testing.T, s string) string {
	t.Helper()
	_, err := bitmask.ParseCPUList(s)
	if err == nil {
		t.Fatalf("%q parses", s)
	}
	return err.Error()
}

func sizeErr(t *testing.T, s string) string {
	t.Helper()
	_, err := units.ParseBytes(s)
	if err == nil {
		t.Fatalf("%q parses", s)
	}
	return err.Error()
}
