package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// status --root enters root's network namespaces (its PID 1's, each
// partition's run/netns/<name>) to probe kubelets: links there to this
// host's namespaces (absolute links resolved on the host) are refused,
// naming them; the kernel's own /proc/PID/ns links are followed.
func TestNetnsFilesStayInsideTheRoot(t *testing.T) {
	f, err := openNetns("/", RootNetns("/"))
	if err != nil {
		t.Fatalf("this process's namespace: %v", err)
	}
	f.Close()

	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "proc/1/ns"), 0o755))
	must(t, os.Symlink("/proc/1/ns/net", filepath.Join(root, "proc/1/ns/net")))
	if _, err := openNetns(root, RootNetns(root)); err == nil || !strings.Contains(err.Error(), filepath.Join(root, "proc/1/ns")+" is not on a procfs") {
		t.Errorf("PID 1's namespace a link to the host's: %v; want refused, naming it", err)
	}
	must(t, os.MkdirAll(filepath.Join(root, "run/netns"), 0o755))
	ns := filepath.Join(root, "run/netns/tnode0")
	must(t, os.Symlink("/proc/self/ns/net", ns))
	if _, err := openNetns(root, "/run/netns/tnode0"); err == nil || !strings.Contains(err.Error(), ns+" is a symbolic link") {
		t.Errorf("a partition's namespace a link to this process's: %v; want refused, naming it", err)
	}
	must(t, os.Remove(ns))
	must(t, os.WriteFile(ns, nil, 0o644))
	if _, err := openNetns(root, "/run/netns/tnode0"); err == nil || !strings.Contains(err.Error(), "is not a namespace") {
		t.Errorf("a plain file as a namespace: %v; want refused", err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
