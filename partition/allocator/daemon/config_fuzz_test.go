package daemon

import (
	"encoding/json"
	"testing"

	"github.com/numa-partition/numa-partition/partition/allocator"
)

// FuzzParseConfig: `allocator serve --allocator-config FILE` takes any
// bytes; they are refused, or they decode to a config that the allocator
// either refuses with an error or starts from, never a panic.
func FuzzParseConfig(f *testing.F) {
	good, err := json.Marshal(smallConfig())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"nodes":[{"id":0}],"policy":"restricted","scope":"pod","maxAllowableNUMANodes":-1}`))
	f.Add([]byte(`{"nodes":[],"policy":"single-numa-node","distances":{"0":{"0":10,"1":-5}}}`))
	f.Add([]byte(`{"policy":"best-effort","kubevirtOverheadRatio":"0.5"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := parseConfig("config.json", data)
		if err != nil {
			return
		}
		if a, err := allocator.New(cfg); (a == nil) == (err == nil) {
			t.Fatalf("allocator.New gave %v and %v: want exactly one", a, err)
		}
	})
}
