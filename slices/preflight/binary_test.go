package preflight

import (
	"testing"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

func TestBinaryCheck(t *testing.T) {
	root := t.TempDir()
	r := fsutil.NewRoot(root)
	c := func(p string) BinaryCheck {
		return BinaryCheck{Root: r, Part: "node0", Daemon: "kubelet", Path: p, ConfigKey: "binary in [kubelet]"}
	}
	put(t, root, "usr/bin/kubelet", "#!/bin/sh\n", 0o755)
	wantPass(t, c("/usr/bin/kubelet"))
	// A link inside the root is followed there.
	link(t, root, "usr/local/bin/kubelet", "/usr/bin/kubelet")
	wantPass(t, c("/usr/local/bin/kubelet"))

	wantError(t, c("/usr/bin/missing"), "partition node0", root+"/usr/bin/missing", "does not exist", "binary in [kubelet]")
	put(t, root, "usr/bin/plain", "data", 0o644)
	wantError(t, c("/usr/bin/plain"), "partition node0", "not executable", "chmod +x")
	wantError(t, c("/usr/bin"), "is a directory")
	// An absolute link is read as the root's own: /bin/sh exists on this
	// machine, not below the root, and is never reached.
	link(t, root, "usr/bin/outside", "/bin/sh")
	wantError(t, c("/usr/bin/outside"), root+"/usr/bin/outside", "does not exist")
	link(t, root, "usr/bin/up", "../../../../../../bin/sh")
	wantError(t, c("/usr/bin/up"), "does not exist")

	cd := BinaryCheck{Root: r, Part: "node1", Daemon: "containerd", Path: "/usr/bin/containerd", ConfigKey: "binary in [runtime]"}
	if cd.Name() != NameContainerdBinary || c("/x").Name() != NameKubeletBinary {
		t.Errorf("names %s, %s", cd.Name(), c("/x").Name())
	}
	wantError(t, cd, "partition node1", "containerd binary", "binary in [runtime]")
}
