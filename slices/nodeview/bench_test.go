package nodeview

import (
	"os"
	"testing"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/numa"
)

// BenchmarkMeminfo: making a partition's /proc/meminfo from the host's and
// two nodes' (already read), what every open of the view costs besides
// the reads.
func BenchmarkMeminfo(b *testing.B) {
	var infos []numa.NodeMeminfo
	for id := range 2 {
		m, err := numa.ParseNodeMeminfo(id, nodeMeminfos[id])
		if err != nil {
			b.Fatal(err)
		}
		infos = append(infos, m)
	}
	host := []byte(hostMeminfo)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Meminfo(host, infos); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkViewRead: one open and read of the served view of this
// machine's node 0 through the kernel's FUSE, as a reader of
// /proc/meminfo in a partition pays it; beside it the host's own
// /proc/meminfo.
func BenchmarkViewRead(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("SKIPPED LOUDLY: mounting FUSE needs root")
	}
	if _, err := os.Stat("/sys/devices/system/node/node0/meminfo"); err != nil {
		b.Skip("SKIPPED LOUDLY: no node0 meminfo here")
	}
	dir := b.TempDir()
	src, err := OpenMeminfoSource(fsutil.NewRoot("/"))
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	srv, err := Serve(dir, map[string]Render{MeminfoFile: src.Nodes([]int{0})})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Unmount()
	for _, c := range []struct{ name, file string }{{"view", dir + "/" + MeminfoFile}, {"proc", "/proc/meminfo"}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := os.ReadFile(c.file); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
