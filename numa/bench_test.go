package numa

import (
	"path/filepath"
	"testing"

	"github.com/numa-partition/numa-partition/numa/numatest"
)

// BenchmarkDiscover reads the largest dumps: the POWER7 with 256 CPUs in 8
// sparse nodes, and an OpenShift worker with 112 CPUs and 300 PCI devices;
// then the synthetic big hosts of numatest (512 CPUs in 6 or 8 nodes, a
// GB200 tray's 34 nodes), written once into a
// temporary directory.
func BenchmarkDiscover(b *testing.B) {
	for _, name := range []string{"hwloc-256ppc-8n8s4t", "ocp-bm-master"} {
		benchDiscover(b, name, filepath.Join(fixtureRoot, name, "sys"))
	}
	for _, s := range numatest.BigHosts {
		benchDiscover(b, s.Name, s.WriteTemp(b))
	}
}

func benchDiscover(b *testing.B, name, root string) {
	fs := NewFS(root)
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := fs.Discover(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
