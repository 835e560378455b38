package preflight

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

func TestCNIBinDirCheck(t *testing.T) {
	root := t.TempDir()
	c := CNIBinDirCheck{Root: fsutil.NewRoot(root), Part: "node1", Path: "/opt/cni/bin"}
	wantWarning(t, c, "partition node1", root+"/opt/cni/bin", "does not exist", "cni_bin_dir")
	if err := os.MkdirAll(filepath.Join(root, "opt/cni/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantWarning(t, c, "is empty")
	put(t, root, "opt/cni/bin/bridge", "", 0o755)
	wantPass(t, c)
}
