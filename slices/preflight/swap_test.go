package preflight

import (
	"testing"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

func TestSwapCheck(t *testing.T) {
	root := t.TempDir()
	c := SwapCheck{Root: fsutil.NewRoot(root), Part: "node0", FailSwapOn: true, ConfigPath: "/etc/numa-partition/kubelet-node0.yaml"}
	wantPass(t, c) // no /proc/swaps: a tree no kernel serves
	const header = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
	put(t, root, "proc/swaps", header, 0o444)
	wantPass(t, c)
	put(t, root, "proc/swaps", header+"/dev/vda2                               partition\t1048572\t\t0\t\t-2\n", 0o444)
	wantError(t, c, "partition node0", "/dev/vda2", "failSwapOn is true", "kubelet-node0.yaml", "swapoff -a")
	c.FailSwapOn = false
	wantWarning(t, c, "partition node0", "/dev/vda2", "failSwapOn: false", "cgroup v2 only")
}
