package planner

import (
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/numa-partition/numa-partition/internal/echo"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// Issue 38 item 6: one error message echoed a 1 MiB value whole (1.5 MB
// of stderr); a bad partition name was echoed by 23 messages (30 MB).
// Every key that takes text, in every table and entry, as a value, a
// list element, a table's key and a table's value, is given a long value
// here: parse and plan may refuse it as they like, but no message shows
// more than echo.MaxBytes of it.
func TestConfigErrorsEchoAtMostMaxBytesOfAValue_Issue38Item6(t *testing.T) {
	long := strings.Repeat("x", 300000)
	tooMuch := regexp.MustCompile("x{" + strconv.Itoa(echo.MaxBytes+1) + "}")
	for _, tc := range longValueConfigs(long) {
		t.Run(tc.name, func(t *testing.T) {
			msg := configErrText(t, tc.text)
			if loc := tooMuch.FindStringIndex(msg); loc != nil {
				start := max(loc[0]-120, 0)
				t.Errorf("echoes more than %d bytes of the value: …%s", echo.MaxBytes, msg[start:loc[0]+20])
			}
			assert.Less(t, len(msg), 64<<10)
		})
	}
}

// configErrText is the error of parsing and planning text on the seed
// machine, "" when it plans.
func configErrText(t *testing.T, text string) string {
	t.Helper()
	c, err := config.Parse("config.toml", []byte(text))
	if err != nil {
		return err.Error()
	}
	if c.Kubelet.Hostname == "" {
		c.Kubelet.Hostname = "h"
	}
	if _, err := NewPlan(synth(seedSpec), c); err != nil {
		return err.Error()
	}
	return ""
}

// longValueConfigs is one config per text-taking key of config.Config,
// found by reflection so that a new key is covered when it is added.
func longValueConfigs(long string) []longValueConfig {
	var out []longValueConfig
	top := reflect.TypeOf(config.Config{})
	for _, f := range reflect.VisibleFields(top) {
		table := f.Tag.Get("toml")
		if table == "" {
			continue
		}
		t := f.Type
		header, prefix := "["+table+"]\n", ""
		if t.Kind() == reflect.Slice {
			header, t = "[["+table+"]]\n", t.Elem()
			if table == "partition" {
				prefix = "nodes = [0]\n"
			}
		}
		for _, g := range reflect.VisibleFields(t) {
			key := g.Tag.Get("toml")
			if key == "" || g.Anonymous {
				continue
			}
			if g.Type.Kind() == reflect.Slice && g.Type.Elem().Kind() == reflect.Struct && g.Type.Elem() != reflect.TypeOf(config.NodeList{}) {
				// [[host.hugepages]]: its size and nodes.
				for _, sub := range []string{"size", "nodes"} {
					out = append(out, longValueConfig{table + "." + key + "." + sub, "[[" + table + "." + key + "]]\ncount = 1\n" + sub + " = \"" + long + "\"\n"})
				}
				continue
			}
			for i, v := range longValues(g.Type, long) {
				out = append(out, longValueConfig{table + "." + key + "#" + strconv.Itoa(i), header + prefix + key + " = " + v + "\n"})
			}
		}
	}
	// A key name is echoed too.
	return append(out, longValueConfig{"key name", "[kubelet]\n" + long + " = 1\n"})
}

type longValueConfig struct{ name, text string }

// longValues are TOML values of type t holding long.
func longValues(t reflect.Type, long string) []string {
	q := `"` + long + `"`
	switch {
	case t == reflect.TypeOf(config.NodeList{}), t.Kind() == reflect.String:
		return []string{q}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return []string{"[" + q + "]"}
	case t.Kind() == reflect.Slice: // groups: node lists
		return []string{"[" + q + "]"}
	case t.Kind() == reflect.Map:
		return []string{"{ " + q + " = \"v\" }", "{ k = " + q + " }"}
	}
	return nil
}
