package planner

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// A facts file written and read again gives the same answers, in JSON
// and in TOML, and keeps "interfaces declared, none" apart from "not
// declared" (checked against, or not).
func TestFactsFileRoundTrip(t *testing.T) {
	facts := FixedFacts{
		Root:   Filesystem{Path: "/", Device: 64768, CapacityBytes: 1 << 40},
		Mounts: []Filesystem{{Path: "/var/lib", Device: 64769, CapacityBytes: 1 << 39}},
		Tasks:  4194304,
		NetInterfaces: []Interface{
			{Name: "eth0", DefaultRoute: true, PCI: "0000:3b:00.0", Addresses: []netip.Prefix{netip.MustParsePrefix("192.0.2.2/24")}},
			{Name: "eth0", Namespace: "np-node1"},
		},
	}
	for _, name := range []string{"facts.json", "facts.toml"} {
		for _, ifaces := range [][]Interface{facts.NetInterfaces, {}, nil} {
			f := facts
			f.NetInterfaces = ifaces
			data, err := NewFactsFile("worker7", f).Marshal(name)
			require.NoError(t, err)
			got, err := ParseFacts(name, data)
			require.NoError(t, err, "%s:\n%s", name, data)
			assert.Equal(t, "worker7", got.Hostname)
			assert.Equal(t, f, got.Facts, "%s:\n%s", name, data)
			for _, dir := range []string{"/", "/var/lib/kubelet-node0", "/var/libx", "/srv"} {
				want, _ := f.Filesystem(dir)
				have, _ := got.Facts.Filesystem(dir)
				assert.Equal(t, want, have, dir)
			}
		}
	}
}

// Decoding is strict, and every refusal names the file and what is
// allowed.
func TestParseFactsRefuses(t *testing.T) {
	root := `"filesystems": [{"path": "/", "device": 1, "capacityBytes": 100}]`
	for _, c := range []struct{ name, data, want string }{
		{"f.json", `{"taskLimit": 10, ` + root + `, "pidMax": 3}`, `unknown field "pidMax"`},
		{"f.json", `{"taskLimit": 10, "taskLimit": 11, ` + root + `}`, `duplicate field "taskLimit"`},
		{"f.json", `{"TaskLimit": 10, ` + root + `}`, `"TaskLimit"`},
		{"f.json", `{"taskLimit": 10, ` + root + `} {}`, "not a host facts file"},
		{"f.json", `{` + root + `}`, "taskLimit is missing or 0"},
		{"f.json", `{"taskLimit": 10, "filesystems": [{"path": "/srv", "device": 1, "capacityBytes": 100}]}`, `no entry for path "/"`},
		{"f.json", `{"taskLimit": 10, "filesystems": [{"path": "srv/", "device": 1, "capacityBytes": 100}]}`, `path "srv/" must be an absolute, clean path`},
		{"f.json", `{"taskLimit": 10, "filesystems": [{"path": "/", "device": 1}]}`, "capacityBytes of / is missing or 0"},
		{"f.json", `{"taskLimit": 10, "filesystems": [{"path": "/", "device": 1, "capacityBytes": 100}, {"path": "/", "device": 2, "capacityBytes": 100}]}`, `"/" is listed twice`},
		{"f.json", `{"taskLimit": 10, ` + root + `, "interfaces": [{"name": "a/b"}]}`, `interfaces[0]: name "a/b"`},
		{"f.json", `{"taskLimit": 10, ` + root + `, "interfaces": [{"name": "eth0", "addresses": ["300.1.1.1/24"]}]}`, "not a host facts file"},
		{"f.toml", "task_limit = 10\npid_max = 3\n[[filesystems]]\npath = \"/\"\ncapacity_bytes = 100\n", "unknown keys pid_max"},
		{"f.toml", "[[filesystems]]\npath = \"/\"\ncapacity_bytes = 100\n", "task_limit is missing or 0"},
		{"f.toml", "task_limit = 10\n[[filesystems]]\npath = \"/\"\n", "capacity_bytes of / is missing or 0"},
		{"f.yaml", "taskLimit: 10", "JSON (name ending in .json) or TOML (.toml)"},
	} {
		_, err := ParseFacts(c.name, []byte(c.data))
		if assert.Error(t, err, c.data) {
			assert.Contains(t, err.Error(), c.name+":", c.data)
			assert.Contains(t, err.Error(), c.want, c.data)
		}
	}
}

// A plan with declared facts is the plan with the same answers from
// anywhere: FixedFacts and a file of them plan alike.
func TestPlanFromFactsFile(t *testing.T) {
	topo := synth(spec{sockets: 2, nodesPerSocket: 1, coresPerNode: 4})
	data, err := NewFactsFile("h", ExampleFacts).Marshal("f.json")
	require.NoError(t, err)
	host, err := ParseFacts("f.json", data)
	require.NoError(t, err)
	c := &config.Config{Kubelet: config.KubeletConfig{Hostname: "h"}}
	a, err := NewPlanFor(topo, ExampleFacts, c)
	require.NoError(t, err)
	b, err := NewPlanFor(topo, host.Facts, c)
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

// FuzzParseFacts: a host facts file comes from another machine; whatever
// its bytes, JSON or TOML, it is refused with an error or read into facts
// that write back into a file reading the same facts again.
func FuzzParseFacts(f *testing.F) {
	facts := FixedFacts{Root: Filesystem{Path: "/", Device: 1, CapacityBytes: 1 << 40}, Tasks: 4194304,
		NetInterfaces: []Interface{{Name: "eth0", DefaultRoute: true, Addresses: []netip.Prefix{netip.MustParsePrefix("192.0.2.2/24")}}}}
	for _, name := range []string{"f.json", "f.toml"} {
		data, err := NewFactsFile("worker7", facts).Marshal(name)
		require.NoError(f, err)
		f.Add(name == "f.toml", data)
	}
	f.Add(false, []byte(`{"hostname":"a","taskLimit":1,"filesystems":[{"path":"/","device":1,"capacityBytes":-1}]}`))
	f.Add(true, []byte("hostname = 'a'\ntaskLimit = 1\n[[filesystems]]\npath = '/'\n"))
	f.Fuzz(func(t *testing.T, isTOML bool, data []byte) {
		name := "f.json"
		if isTOML {
			name = "f.toml"
		}
		got, err := ParseFacts(name, data)
		if (got == nil) == (err == nil) {
			t.Fatalf("ParseFacts gave %v and %v: want exactly one", got, err)
		}
		if err != nil {
			return
		}
		again, err := NewFactsFile(got.Hostname, got.Facts).Marshal(name)
		if err != nil {
			t.Fatalf("accepted facts do not write back: %v", err)
		}
		back, err := ParseFacts(name, again)
		if err != nil {
			t.Fatalf("accepted facts, written back, are refused: %v\n%s", err, again)
		}
		assert.Equal(t, got, back)
	})
}
