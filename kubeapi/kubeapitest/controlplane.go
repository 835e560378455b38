package kubeapitest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// RealbinEnv names the folder of the real binaries test/realbin/build.sh
// builds (etcd, kube-apiserver, ...; make test sets it).
const RealbinEnv = "NUMA_PARTITION_REALBIN"

// ControlPlane is a real etcd and kube-apiserver (test/realbin/build.sh's)
// on ports of their own on 127.0.0.1, for the test only: TLS with a CA of
// the test's, client certificates and ServiceAccount tokens, the Node and
// RBAC authorizers with NodeRestriction, as a kubeadm cluster's.
type ControlPlane struct {
	URL   string
	CA    *CA
	Admin *http.Client // system:masters
	Dir   string       // the processes' data, logs and certificates
	Bin   string       // the folder of the binaries
	// APIServer is the kube-apiserver process (to stop it, SIGSTOP).
	APIServer *os.Process
}

// StartControlPlane starts etcd and kube-apiserver, stopped when the test
// ends, and waits until the API server is ready. Without the binaries
// (RealbinEnv unset, or a folder without them) the test is skipped,
// saying so.
func StartControlPlane(t testing.TB) *ControlPlane {
	t.Helper()
	bin := os.Getenv(RealbinEnv)
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if bin == "" {
			break
		}
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			bin = ""
		}
	}
	if bin == "" {
		t.Skipf("NOT RUN: needs the real etcd and kube-apiserver: set %s to the folder test/realbin/build.sh prints", RealbinEnv)
	}
	dir := t.TempDir()
	ca := NewCA(t, "kubernetes")
	cert, key := ca.ServingPEM(t)
	adminCert, adminKey := ca.Client(t, "kubernetes-admin", "system:masters")
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	saPriv, _ := x509.MarshalECPrivateKey(saKey)
	saPub, _ := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	etcdPort, peerPort, apiPort := freePort(t), freePort(t), freePort(t)
	cp := &ControlPlane{URL: fmt.Sprintf("https://127.0.0.1:%d", apiPort), CA: ca, Dir: dir, Bin: bin}
	cp.Start(t, "etcd", "--name=test", "--data-dir="+filepath.Join(dir, "etcd"),
		fmt.Sprintf("--listen-client-urls=http://127.0.0.1:%d", etcdPort), fmt.Sprintf("--advertise-client-urls=http://127.0.0.1:%d", etcdPort),
		fmt.Sprintf("--listen-peer-urls=http://127.0.0.1:%d", peerPort), fmt.Sprintf("--initial-advertise-peer-urls=http://127.0.0.1:%d", peerPort),
		fmt.Sprintf("--initial-cluster=test=http://127.0.0.1:%d", peerPort), "--initial-cluster-state=new", "--log-level=warn")
	cp.APIServer = cp.Start(t, "kube-apiserver", "--bind-address=127.0.0.1", fmt.Sprint("--secure-port=", apiPort),
		"--advertise-address=10.0.2.100", "--endpoint-reconciler-type=none",
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", etcdPort),
		"--tls-cert-file="+cp.WriteFile(t, "apiserver.crt", cert),
		"--tls-private-key-file="+cp.WriteFile(t, "apiserver.key", key),
		"--client-ca-file="+cp.WriteFile(t, "ca.crt", ca.PEM),
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		"--service-cluster-ip-range=10.96.0.0/16", "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+cp.WriteFile(t, "sa.pub", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub})),
		"--service-account-signing-key-file="+cp.WriteFile(t, "sa.key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: saPriv})),
		"--profiling=false")
	pair, err := tls.X509KeyPair(adminCert, adminKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	cp.Admin = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}}}
	t0 := time.Now()
	cp.WaitFor(t, 5*time.Minute, "kube-apiserver ready", func() bool {
		resp, err := cp.Admin.Get(cp.URL + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	t.Logf("kube-apiserver ready in %s", time.Since(t0).Round(time.Millisecond))
	return cp
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// WriteFile writes b to cp.Dir/name (mode 0600) and returns its path.
func (cp *ControlPlane) WriteFile(t testing.TB, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(cp.Dir, name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Start runs binary name of cp.Bin until the test ends (SIGTERM, SIGKILL
// after 10 s; SIGKILL too if the test process dies), its output in
// cp.Dir/NAME.log, shown when the test failed.
func (cp *ControlPlane) Start(t testing.TB, name string, args ...string) *os.Process {
	t.Helper()
	log, err := os.Create(filepath.Join(cp.Dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(cp.Bin, name), args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT) // a test may have stopped it
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			if len(b) > 3000 {
				b = b[len(b)-3000:]
			}
			t.Logf("%s log (tail):\n%s", name, b)
		}
	})
	return cmd.Process
}

// Kubeconfig is a kubeconfig of cp with the given user entry
// (client-certificate-data and client-key-data, or token).
func (cp *ControlPlane) Kubeconfig(t testing.TB, user map[string]any) []byte {
	t.Helper()
	b, err := yaml.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Config", "current-context": "c",
		"clusters": []any{map[string]any{"name": "c", "cluster": map[string]any{"server": cp.URL, "certificate-authority-data": cp.CA.PEM}}},
		"contexts": []any{map[string]any{"name": "c", "context": map[string]any{"cluster": "c", "user": "u"}}},
		"users":    []any{map[string]any{"name": "u", "user": user}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// WaitFor polls ok every 100 ms until it holds, failing the test after d.
func (cp *ControlPlane) WaitFor(t testing.TB, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no %s after %s", what, d)
		}
	}
}
