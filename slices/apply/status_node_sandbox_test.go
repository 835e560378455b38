package apply

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/status"
)

// TestStatusNodes: status reads each partition's Node with its own
// kubelet's kubeconfig below --root, from the root's network namespace;
// a healthy kubelet without a kubeconfig has not joined; a NotReady Node
// is a problem; --kubeconfig reads them all with an admin's credentials
// from this machine; --no-api skips it all.
func TestStatusNodes(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(2)
	for i := range f.Plan.Partitions {
		p := &f.Plan.Partitions[i]
		p.Memory = nil // status reads the real /sys here
		p.NodeName = "sandbox-" + p.Name
		p.Kubelet.Kubeconfig = "/etc/kubernetes/kubelet-" + p.Name + ".conf"
	}
	useFakeKubelets(f)
	_, err := e.apply(t, f, nil)
	applytest.Must(t, err)
	ctx := context.Background()
	so := status.Options{Root: e.sb.Root, Sysfs: "/sys", Systemd: e.m}

	noAPI := so
	noAPI.NoAPI = true
	st := waitHealthy(t, ctx, noAPI)
	if st.Health != status.Healthy {
		t.Fatalf("status --no-api after apply: %s, problems %q", st.Health, st.Problems)
	}
	for _, p := range st.Partitions {
		if p.Node.Name != "sandbox-"+p.Name || p.Node.Reason != status.NodeNotChecked || p.Node.Kubeconfig != "/etc/kubernetes/kubelet-"+p.Name+".conf" {
			t.Errorf("--no-api: node of %s: %+v", p.Name, p.Node)
		}
	}

	// The kubelets answer but have no kubeconfig: they have not joined.
	st, err = status.Read(ctx, so)
	applytest.Must(t, err)
	wantProblems(t, st, "kubelet of tnode0 is healthy but has not joined: /etc/kubernetes/kubelet-tnode0.conf does not exist",
		"kubelet of tnode1 is healthy but has not joined: /etc/kubernetes/kubelet-tnode1.conf does not exist")

	// An API server in the sandbox's network namespace, and the kubelets'
	// kubeconfigs after TLS bootstrap below its root.
	s := kubeapitest.NewServer(t, kubeapitest.Options{Listener: listenIn(t, e.sb.Root)})
	s.SetNode(kubeapitest.Node("sandbox-tnode0", corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"))
	s.SetNode(kubeapitest.Node("sandbox-tnode1", corev1.ConditionFalse, "KubeletNotReady", "container runtime network not ready"))
	for _, p := range f.Plan.Partitions {
		cert, key := s.CA.Client(t, "system:node:"+p.NodeName, "system:nodes")
		pem := "/var/lib/kubelet-" + p.Name + "/pki/kubelet-client-current.pem"
		writeInSandbox(t, e, pem, append(cert, key...))
		writeInSandbox(t, e, p.Kubelet.Kubeconfig, s.Kubeconfig(t, map[string]string{"client-certificate": pem, "client-key": pem}))
	}
	st, err = status.Read(ctx, so)
	applytest.Must(t, err)
	wantProblems(t, st, "Node sandbox-tnode1 NotReady: KubeletNotReady (container runtime network not ready)")
	if n := st.Partitions[0].Node; !n.Ready || n.Condition != "True" || n.Allocatable["cpu"] != "4" || n.Capacity["memory"] != "16Gi" {
		t.Errorf("node of tnode0: %+v", n)
	}
	s.SetNode(kubeapitest.Node("sandbox-tnode1", corev1.ConditionTrue, "KubeletReady", ""))
	st, err = status.Read(ctx, so)
	applytest.Must(t, err)
	if st.Health != status.Healthy {
		t.Errorf("both Nodes Ready: %s, problems %q", st.Health, st.Problems)
	}

	// An admin's kubeconfig on this machine, for an API server reached
	// from this machine's network namespace.
	admin := kubeapitest.NewServer(t, kubeapitest.Options{})
	admin.SetNode(kubeapitest.Node("sandbox-tnode0", corev1.ConditionTrue, "KubeletReady", ""))
	cert, key := admin.CA.Client(t, "admin", "system:masters")
	dir := t.TempDir()
	applytest.Must(t, os.WriteFile(filepath.Join(dir, "admin.pem"), append(cert, key...), 0o600))
	withAdmin := so
	withAdmin.Kubeconfig = filepath.Join(dir, "config")
	applytest.Must(t, os.WriteFile(withAdmin.Kubeconfig, admin.Kubeconfig(t, map[string]string{"client-certificate": "admin.pem", "client-key": "admin.pem"}), 0o600))
	st, err = status.Read(ctx, withAdmin)
	applytest.Must(t, err)
	wantProblems(t, st, `Node sandbox-tnode1 of tnode1: Node not registered: GET `+admin.URL+`/api/v1/nodes/sandbox-tnode1: 404 Not Found: nodes "sandbox-tnode1" not found`)
	if n := st.Partitions[1].Node; n.Reason != status.NodeNotRegistered || n.Kubeconfig != withAdmin.Kubeconfig {
		t.Errorf("node of tnode1 with --kubeconfig: %+v", n)
	}
	// An unusable --kubeconfig is status failing, not the host degraded.
	withAdmin.Kubeconfig = filepath.Join(dir, "missing")
	if _, err := status.Read(ctx, withAdmin); err == nil || !strings.Contains(err.Error(), "kubeconfig "+withAdmin.Kubeconfig) {
		t.Errorf("missing --kubeconfig: %v", err)
	}
}

func wantProblems(t *testing.T, st *status.Status, want ...string) {
	t.Helper()
	if st.Health != status.Degraded || !slices.Equal(st.Problems, want) {
		t.Errorf("health %s, problems:\n  %s\nwant degraded with:\n  %s", st.Health, strings.Join(st.Problems, "\n  "), strings.Join(want, "\n  "))
	}
}

// writeInSandbox writes a file at path p of the sandbox, removed (with
// the directories it created) when the test ends: the sandbox is shared.
func writeInSandbox(t *testing.T, e *env, p string, b []byte) {
	t.Helper()
	full := e.sb.Path(p)
	var made []string
	for d := filepath.Dir(full); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		made = append(made, d)
	}
	applytest.Must(t, os.MkdirAll(filepath.Dir(full), 0o755))
	applytest.Must(t, os.WriteFile(full, b, 0o600))
	t.Cleanup(func() {
		os.Remove(full)
		for _, d := range made { // deepest first
			os.Remove(d)
		}
	})
}

// listenIn opens a TCP listener on 127.0.0.1 in the network namespace of
// root's PID 1, the way dialer dials there.
func listenIn(t *testing.T, root string) net.Listener {
	t.Helper()
	var l net.Listener
	var err error
	applytest.Must(t, host.InNetns(root, host.RootNetns(root), func() { l, err = net.Listen("tcp", "127.0.0.1:0") }))
	applytest.Must(t, err)
	return l
}
