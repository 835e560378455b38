package preflight

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// tcpTable is a /proc/net/tcp listing port listening, socket inode inode.
func tcpTable(port int, inode uint64) string {
	return "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		fmt.Sprintf("   0: 0100007F:%04X 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 %d 1 0000000000000000 100 0 0 10 0\n", port, inode)
}

// process makes pid below root hold socket inode, in unit.
func process(t *testing.T, root string, pid int, inode uint64, unit string) {
	t.Helper()
	dir := fmt.Sprintf("proc/%d", pid)
	put(t, root, dir+"/comm", "squatter\n", 0o444)
	put(t, root, dir+"/cgroup", "0::/system.slice/"+unit+"\n", 0o444)
	link(t, root, dir+"/fd/3", fmt.Sprintf("socket:[%d]", inode))
}

func TestPortCheckHost(t *testing.T) {
	root := t.TempDir()
	ports := []bundle.Port{{Port: 10248, Owner: "node0 kubelet healthzPort", Unit: "kubelet-node0.service"}}
	c := PortCheck{Root: fsutil.NewRoot(root), Ports: ports}
	put(t, root, "proc/1/net/tcp", tcpTable(10250, 77), 0o444)
	wantPass(t, c) // another port is taken

	put(t, root, "proc/1/net/tcp", tcpTable(10248, 77), 0o444)
	wantError(t, c, "port 10248", "node0 kubelet healthzPort", "another namespace or an exited process", "free it or choose another port")
	process(t, root, 812, 77, "nginx.service")
	wantError(t, c, "port 10248", "pid 812 (squatter) in nginx.service")
	_, errs := c.Check()
	var pe *PortInUseError
	if len(errs) != 1 || !errors.As(errs[0], &pe) || pe.Unit != "nginx.service" {
		t.Errorf("want a PortInUseError in nginx.service, got %v", errs)
	}
	// A unit of the applied generation holds it: apply stops it first.
	c.Own = map[string]bool{"nginx.service": true}
	wantPass(t, c)
	c.Own = nil
	// The unit that will own it holds it: our own daemon.
	c.Ports[0].Unit = "nginx.service"
	wantPass(t, c)

	c.Ports = append(c.Ports, bundle.Port{Port: 10248, Owner: "node1 kubelet port"})
	wantError(t, c, "planned twice")
}

func TestPortCheckNamespace(t *testing.T) {
	root := t.TempDir()
	ports := []bundle.Port{{Port: 10250, Owner: "node1 kubelet port", Unit: "kubelet-node1.service"}}
	c := PortCheck{Root: fsutil.NewRoot(root), Part: "node1", Namespace: "np-node1", Ports: ports}
	// The host's PID 1 listens on 10250: not the partition's namespace.
	put(t, root, "proc/1/net/tcp", tcpTable(10250, 5), 0o444)
	wantPass(t, c) // no namespace yet: nothing listens there

	put(t, root, "run/netns/np-node1", "", 0o444) // stands for the namespace's mount
	wantPass(t, c)                                // nothing runs in it
	fi, err := os.Stat(filepath.Join(root, "run/netns/np-node1"))
	if err != nil {
		t.Fatal(err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	link(t, root, "proc/40/ns/net", fmt.Sprintf("net:[%d]", ino))
	put(t, root, "proc/40/net/tcp", tcpTable(10251, 9), 0o444)
	wantPass(t, c) // its table does not list 10250
	put(t, root, "proc/40/net/tcp", tcpTable(10250, 9), 0o444)
	process(t, root, 40, 9, "other.service")
	wantError(t, c, "port 10250 in network namespace np-node1", "node1 kubelet port", "pid 40 (squatter) in other.service")
}
