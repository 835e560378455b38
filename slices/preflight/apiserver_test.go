package preflight

import (
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

func TestAPIServerCheck(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"gitVersion": "v1.37.2"}`)
	}))
	defer srv.Close()
	root := t.TempDir()
	put(t, root, "etc/kubernetes/pki/ca.crt", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})), 0o644)
	kubeconfig := func(server string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: k
  cluster:
    server: %s
    certificate-authority: /etc/kubernetes/pki/ca.crt
contexts:
- name: b
  context: {cluster: k, user: b}
current-context: b
users:
- name: b
  user: {token: abcdef.0123456789abcdef}
`, server)
	}
	c := APIServerCheck{Configs: NewKubeconfigs(root), Part: "node0", Kubeconfig: "/etc/kubernetes/kubelet-node0.conf", Bootstrap: "/etc/kubernetes/bootstrap-kubelet.conf", Asked: map[string]error{}}
	wantPass(t, c) // no kubeconfig loads: the Kubeconfig check's
	if asked.Load() != 0 {
		t.Fatal("asked a server no kubeconfig names")
	}

	put(t, root, "etc/kubernetes/bootstrap-kubelet.conf", kubeconfig(srv.URL), 0o600)
	c.Configs = NewKubeconfigs(root) // a preflight reads each file once
	wantPass(t, c)
	c.Part = "node1"
	wantPass(t, c) // the same bootstrap kubeconfig: asked once
	if n := asked.Load(); n != 1 {
		t.Errorf("asked %d times, want once", n)
	}

	// A server another CA signed: not the cluster's.
	c.Asked = map[string]error{}
	c.Configs = NewKubeconfigs(root)
	put(t, root, "etc/kubernetes/pki/ca.crt", caPEM(t), 0o644)
	wantWarning(t, c, "partition node1", srv.URL, root+"/etc/kubernetes/bootstrap-kubelet.conf", "does not answer", "certificate")

	// Nothing listens there.
	dead := httptest.NewTLSServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	put(t, root, "etc/kubernetes/kubelet-node0.conf", kubeconfig(url), 0o600)
	put(t, root, "etc/kubernetes/kubelet-node1.conf", kubeconfig(url), 0o600)
	c.Asked = map[string]error{}
	c.Configs = NewKubeconfigs(root)
	var dials atomic.Int32
	c.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	c.Part, c.Kubeconfig = "node0", "/etc/kubernetes/kubelet-node0.conf"
	wantWarning(t, c, url, "kubelet-node0.conf", "does not answer", "cannot join until it does")
	// Once joined, each partition has its own kubeconfig naming the same
	// server: it is asked once, not once a partition (a boot without the
	// network waited 5 s for each).
	c.Part, c.Kubeconfig = "node1", "/etc/kubernetes/kubelet-node1.conf"
	wantWarning(t, c, url, "partition node1", "kubelet-node1.conf", "does not answer")
	if n := dials.Load(); n != 1 {
		t.Errorf("dialled the unreachable server %d times for two kubeconfigs naming it, want once", n)
	}
}
