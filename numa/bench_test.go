package numa

import (
	"path/filepath"
	"testing"
)

// BenchmarkDiscover reads the largest dumps: the POWER7 with 256 CPUs in 8
// sparse nodes, and an OpenShift worker with 112 CPUs and 300 PCI devices.
func BenchmarkDiscover(b *testing.B) {
	for _, name := range []string{"hwloc-256ppc-8n8s4t", "ocp-bm-master"} {
		fs := NewFS(filepath.Join(fixtureRoot, name, "sys"))
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fs.Discover(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
