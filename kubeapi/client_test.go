package kubeapi_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
)

// write writes files below dir (creating directories) and returns dir.
func write(t *testing.T, dir string, files map[string][]byte) string {
	t.Helper()
	for p, b := range files {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// getNode loads the kubeconfig at root/path and GETs Node name.
func getNode(t *testing.T, root, path, name string) (*corev1.Node, error) {
	t.Helper()
	cfg, err := kubeapi.Load(root, path)
	if err != nil {
		return nil, err
	}
	c := kubeapi.NewClient(cfg, kubeapi.Options{Timeout: 5 * time.Second})
	defer c.Close()
	return c.Node(context.Background(), name)
}

func mustReady(t *testing.T, n *corev1.Node, err error, want corev1.ConditionStatus) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	c, ok := kubeapi.ReadyCondition(n)
	if !ok || c.Status != want {
		t.Fatalf("Ready condition %+v (present %v), want %s", c, ok, want)
	}
}

// TestNodeClientCertFiles: client-certificate and client-key as files
// relative to the kubeconfig's directory, the CA as a relative file too.
func TestNodeClientCertFiles(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	s.SetNode(kubeapitest.Node("host-node0", corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"))
	cert, key := s.CA.Client(t, "system:node:host-node0", "system:nodes")
	kc := strings.Replace(string(s.Kubeconfig(t, map[string]string{"client-certificate": "pki/node0.crt", "client-key": "pki/node0.key"})),
		"certificate-authority-data: "+base64.StdEncoding.EncodeToString(s.CA.PEM), "certificate-authority: ../ca/ca.crt", 1)
	dir := write(t, t.TempDir(), map[string][]byte{
		"etc/kubernetes/kubelet.conf": []byte(kc), "etc/kubernetes/pki/node0.crt": cert, "etc/kubernetes/pki/node0.key": key,
		"etc/ca/ca.crt": s.CA.PEM,
	})
	if !strings.Contains(kc, "certificate-authority: ../ca/ca.crt") {
		t.Fatalf("the test did not make the CA a file:\n%s", kc)
	}
	n, err := getNode(t, "/", filepath.Join(dir, "etc/kubernetes/kubelet.conf"), "host-node0")
	mustReady(t, n, err, corev1.ConditionTrue)
	if got := kubeapi.Quantities(n.Status.Allocatable); got["cpu"] != "4" || got["memory"] != "8Gi" {
		t.Errorf("allocatable %v", got)
	}
}

// TestNodeClientCertData: everything inline (-data fields).
func TestNodeClientCertData(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	s.SetNode(kubeapitest.Node("host-node0", corev1.ConditionFalse, "KubeletNotReady", "container runtime network not ready"))
	cert, key := s.CA.Client(t, "system:node:host-node0", "system:nodes")
	kc := s.Kubeconfig(t, map[string]string{
		"client-certificate-data": base64.StdEncoding.EncodeToString(cert),
		"client-key-data":         base64.StdEncoding.EncodeToString(key),
	})
	dir := write(t, t.TempDir(), map[string][]byte{"kubelet.conf": kc})
	n, err := getNode(t, "/", filepath.Join(dir, "kubelet.conf"), "host-node0")
	mustReady(t, n, err, corev1.ConditionFalse)
	if c, _ := kubeapi.ReadyCondition(n); c.Reason != "KubeletNotReady" || c.Message != "container runtime network not ready" {
		t.Errorf("Ready condition %+v", c)
	}
}

// TestNodeCombinedCertKeyUnderRoot: kubelet's own kubeconfig after TLS
// bootstrap names one PEM holding both certificate and key, by an
// absolute path that is read below root (status --root).
func TestNodeCombinedCertKeyUnderRoot(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	s.SetNode(kubeapitest.Node("host-node0", corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."))
	cert, key := s.CA.Client(t, "system:node:host-node0", "system:nodes")
	const pem = "/var/lib/kubelet-node0/pki/kubelet-client-current.pem"
	root := write(t, t.TempDir(), map[string][]byte{
		"etc/kubernetes/kubelet-node0.conf": s.Kubeconfig(t, map[string]string{"client-certificate": pem, "client-key": pem}),
		pem:                                 append(append([]byte{}, cert...), key...),
	})
	n, err := getNode(t, root, "/etc/kubernetes/kubelet-node0.conf", "host-node0")
	mustReady(t, n, err, corev1.ConditionUnknown)
}

// TestNodeToken: a bearer token, inline and from tokenFile (relative).
func TestNodeToken(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{ClientAuth: tls.VerifyClientCertIfGiven})
	s.SetNode(kubeapitest.Node("host-node1", corev1.ConditionTrue, "KubeletReady", ""))
	s.AddToken("s3cret", "admin", "system:masters")
	dir := write(t, t.TempDir(), map[string][]byte{
		"inline.conf":   s.Kubeconfig(t, map[string]string{"token": "s3cret"}),
		"file.conf":     s.Kubeconfig(t, map[string]string{"tokenFile": "secrets/token"}),
		"wrong.conf":    s.Kubeconfig(t, map[string]string{"token": "guess"}),
		"secrets/token": []byte("s3cret\n"),
	})
	for _, f := range []string{"inline.conf", "file.conf"} {
		n, err := getNode(t, "", filepath.Join(dir, f), "host-node1")
		mustReady(t, n, err, corev1.ConditionTrue)
	}
	_, err := getNode(t, "", filepath.Join(dir, "wrong.conf"), "host-node1")
	if !errors.Is(err, kubeapi.ErrUnauthorized) || !strings.Contains(err.Error(), "401") {
		t.Errorf("wrong token: %v, want 401 unauthorized", err)
	}
}

// TestNodeNotRegistered: 404 is ErrNotRegistered with the API's message.
func TestNodeNotRegistered(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	cert, key := s.CA.Client(t, "admin", "system:masters")
	kc := s.Kubeconfig(t, map[string]string{"client-certificate": "a.pem", "client-key": "a.key"})
	dir := write(t, t.TempDir(), map[string][]byte{"kc": kc, "a.pem": cert, "a.key": key})
	_, err := getNode(t, "/", filepath.Join(dir, "kc"), "host-node7")
	if !errors.Is(err, kubeapi.ErrNotRegistered) {
		t.Fatalf("error %v, want ErrNotRegistered", err)
	}
	for _, want := range []string{"Node not registered", "404", `nodes "host-node7" not found`, "/api/v1/nodes/host-node7"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestNodeForbidden: a kubelet may read only its own Node; the 403 carries
// the API's message.
func TestNodeForbidden(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	s.SetNode(kubeapitest.Node("host-node1", corev1.ConditionTrue, "KubeletReady", ""))
	cert, key := s.CA.Client(t, "system:node:host-node0", "system:nodes")
	dir := write(t, t.TempDir(), map[string][]byte{"kc": s.Kubeconfig(t, map[string]string{"client-certificate": "k.pem", "client-key": "k.pem"}), "k.pem": append(cert, key...)})
	_, err := getNode(t, "/", filepath.Join(dir, "kc"), "host-node1")
	if !errors.Is(err, kubeapi.ErrForbidden) {
		t.Fatalf("error %v, want ErrForbidden", err)
	}
	for _, want := range []string{"403 Forbidden", `User "system:node:host-node0" cannot get resource "nodes"`, "only its own Node object"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestNodeBadCA: a CA that did not sign the server's certificate fails
// the request (ErrUnreachable, naming x509); a CA that is not PEM fails
// Load, naming the field.
func TestNodeBadCA(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	s.SetNode(kubeapitest.Node("host-node0", corev1.ConditionTrue, "KubeletReady", ""))
	other := kubeapitest.NewCA(t, "not-kubernetes")
	cert, key := s.CA.Client(t, "system:node:host-node0", "system:nodes")
	good := base64.StdEncoding.EncodeToString(s.CA.PEM)
	kc := string(s.Kubeconfig(t, map[string]string{"client-certificate": "k.pem", "client-key": "k.pem"}))
	dir := write(t, t.TempDir(), map[string][]byte{
		"k.pem":      append(cert, key...),
		"other.conf": []byte(strings.Replace(kc, good, base64.StdEncoding.EncodeToString(other.PEM), 1)),
		"junk.conf":  []byte(strings.Replace(kc, good, base64.StdEncoding.EncodeToString([]byte("not a certificate")), 1)),
	})
	_, err := getNode(t, "/", filepath.Join(dir, "other.conf"), "host-node0")
	if !errors.Is(err, kubeapi.ErrUnreachable) || !strings.Contains(err.Error(), "x509") {
		t.Errorf("other CA: %v, want an x509 error", err)
	}
	_, err = getNode(t, "/", filepath.Join(dir, "junk.conf"), "host-node0")
	var ke *kubeapi.KubeconfigError
	if !errors.As(err, &ke) || ke.Field != `clusters["default-cluster"].cluster.certificate-authority-data` || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("junk CA: %v, want a kubeconfig error naming certificate-authority-data", err)
	}
}

// TestNodeReadyStates: True, False, Unknown and no Ready condition at all.
func TestNodeReadyStates(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	cert, key := s.CA.Client(t, "admin", "system:masters")
	dir := write(t, t.TempDir(), map[string][]byte{"kc": s.Kubeconfig(t, map[string]string{"client-certificate": "k.pem", "client-key": "k.pem"}), "k.pem": append(cert, key...)})
	cfg, err := kubeapi.Load("/", filepath.Join(dir, "kc"))
	if err != nil {
		t.Fatal(err)
	}
	c := kubeapi.NewClient(cfg, kubeapi.Options{})
	defer c.Close()
	for _, st := range []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown, ""} {
		name := "n-" + strings.ToLower(string(st)) + "x"
		s.SetNode(kubeapitest.Node(name, st, "R"+string(st), "M"))
		n, err := c.Node(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		cond, ok := kubeapi.ReadyCondition(n)
		if ok != (st != "") || cond.Status != st || (ok && cond.Reason != "R"+string(st)) {
			t.Errorf("%q: condition %+v present %v", st, cond, ok)
		}
	}
}

// TestLoadFileErrors: a missing kubeconfig is fs.ErrNotExist with no
// field (kubelet has not joined); a missing certificate names its field.
func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := kubeapi.Load("/", filepath.Join(dir, "nope.conf"))
	var ke *kubeapi.KubeconfigError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &ke) || ke.Field != "" {
		t.Errorf("missing kubeconfig: %v", err)
	}
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	write(t, dir, map[string][]byte{"kc": s.Kubeconfig(t, map[string]string{"client-certificate": "gone.pem", "client-key": "gone.pem"})})
	_, err = kubeapi.Load("/", filepath.Join(dir, "kc"))
	if !errors.As(err, &ke) || ke.Field != `users["default-auth"].user.client-certificate` || !strings.Contains(err.Error(), filepath.Join(dir, "gone.pem")) {
		t.Errorf("missing certificate: %v", err)
	}
	write(t, dir, map[string][]byte{"kc": s.Kubeconfig(t, map[string]string{"client-certificate": "c.pem", "client-key": "c.pem"}), "c.pem": s.CA.PEM})
	_, err = kubeapi.Load("/", filepath.Join(dir, "kc"))
	if !errors.As(err, &ke) || ke.Field != `users["default-auth"].user.client-certificate` || !strings.Contains(err.Error(), "with client-key") {
		t.Errorf("certificate without its key: %v", err)
	}
}

// TestNodeTimeout: a server that accepts and never answers is cut off by
// the timeout.
func TestNodeTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn // held open, never answered
	defer func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	kc := "clusters: [{name: c, cluster: {server: 'https://" + l.Addr().String() + "'}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n"
	dir := write(t, t.TempDir(), map[string][]byte{"kc": []byte(kc)})
	cfg, err := kubeapi.Load("/", filepath.Join(dir, "kc"))
	if err != nil {
		t.Fatal(err)
	}
	c := kubeapi.NewClient(cfg, kubeapi.Options{Timeout: 200 * time.Millisecond})
	defer c.Close()
	t0 := time.Now()
	_, err = c.Node(context.Background(), "host-node0")
	if !errors.Is(err, kubeapi.ErrUnreachable) || time.Since(t0) > 3*time.Second {
		t.Errorf("hanging server: %v after %s", err, time.Since(t0))
	}
}

func TestNodeRefusesBadNames(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	dir := write(t, t.TempDir(), map[string][]byte{"kc": s.Kubeconfig(t, nil)})
	cfg, err := kubeapi.Load("/", filepath.Join(dir, "kc"))
	if err != nil {
		t.Fatal(err)
	}
	c := kubeapi.NewClient(cfg, kubeapi.Options{})
	defer c.Close()
	for _, name := range []string{"", "..", "a/b", "UPPER"} {
		if _, err := c.Node(context.Background(), name); err == nil || errors.Is(err, kubeapi.ErrUnreachable) {
			t.Errorf("name %q: %v, want a refusal before any request", name, err)
		}
	}
}

// TestPod: a kubelet's credentials read the pods bound to its Node (with
// their containers' resources), not another Node's pods.
func TestPod(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	mine := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"},
		Spec: corev1.PodSpec{NodeName: "host-node0", Containers: []corev1.Container{{Name: "app",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}}}}}}
	theirs := mine.DeepCopy()
	theirs.Name, theirs.UID, theirs.Spec.NodeName = "db", "u2", "host-node1"
	s.SetPod(mine)
	s.SetPod(theirs)
	cert, key := s.CA.Client(t, "system:node:host-node0", "system:nodes")
	kc := write(t, t.TempDir(), map[string][]byte{"kubelet.conf": s.Kubeconfig(t, map[string]string{
		"client-certificate-data": base64.StdEncoding.EncodeToString(cert), "client-key-data": base64.StdEncoding.EncodeToString(key)})})
	cfg, err := kubeapi.Load("/", filepath.Join(kc, "kubelet.conf"))
	if err != nil {
		t.Fatal(err)
	}
	c := kubeapi.NewClient(cfg, kubeapi.Options{})
	defer c.Close()
	p, err := c.Pod(context.Background(), "ns", "web")
	if err != nil {
		t.Fatal(err)
	}
	if p.UID != "u1" || p.Spec.Containers[0].Resources.Limits.Memory().String() != "2Gi" {
		t.Errorf("pod %s uid %s resources %v", p.Name, p.UID, p.Spec.Containers[0].Resources)
	}
	if _, err := c.Pod(context.Background(), "ns", "db"); !errors.Is(err, kubeapi.ErrForbidden) || !strings.Contains(err.Error(), "no relationship found") {
		t.Errorf("another Node's pod: %v, want ErrForbidden with the API's message", err)
	}
	if _, err := c.Pod(context.Background(), "ns", "../nodes/x"); err == nil || !strings.Contains(err.Error(), `pod name "../nodes/x"`) {
		t.Errorf("a name that is a path: %v", err)
	}
	if got := s.Gets("/api/v1/namespaces/ns/pods/web"); got != 1 {
		t.Errorf("GETs of the pod: %d, want 1", got)
	}
}

// TestNodeExecCredential: a kubeconfig whose user is an exec credential
// plugin (client.authentication.k8s.io/v1, as aws eks get-token or
// kubelogin print it) authenticates with the token the plugin prints,
// with the kubeconfig's env; the plugin runs once for several requests
// (its credential is cached), again on a 401, and never for another
// host's root.
func TestNodeExecCredential(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{ClientAuth: tls.VerifyClientCertIfGiven})
	s.SetNode(kubeapitest.Node("host-node1", corev1.ConditionTrue, "KubeletReady", ""))
	s.AddToken("s3cret", "admin", "system:masters")
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	plugin := filepath.Join(dir, "get-token")
	script := "#!/bin/sh\necho run >> " + runs + "\n" +
		`printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}\n' "$TOKEN"` + "\n"
	if err := os.WriteFile(plugin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	kubeconfig := func(token string) []byte {
		return s.KubeconfigOf(t, map[string]any{"exec": map[string]any{
			"apiVersion": "client.authentication.k8s.io/v1", "command": plugin, "args": []string{token},
			"env": []map[string]string{{"name": "TOKEN", "value": token}}, "interactiveMode": "Never"}})
	}
	write(t, dir, map[string][]byte{"good.conf": kubeconfig("s3cret"), "wrong.conf": kubeconfig("guess")})
	count := func() int {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "run")
	}

	cfg, err := kubeapi.Load("", filepath.Join(dir, "good.conf"))
	if err != nil {
		t.Fatal(err)
	}
	c := kubeapi.NewClient(cfg, kubeapi.Options{Timeout: 5 * time.Second})
	defer c.Close()
	for range 3 {
		n, err := c.Node(context.Background(), "host-node1")
		mustReady(t, n, err, corev1.ConditionTrue)
	}
	if got := count(); got != 1 {
		t.Errorf("the plugin ran %d times for 3 requests, want once (its credential cached)", got)
	}

	_, err = getNode(t, "", filepath.Join(dir, "wrong.conf"), "host-node1")
	if !errors.Is(err, kubeapi.ErrUnauthorized) {
		t.Errorf("a plugin's wrong token: %v, want 401 unauthorized", err)
	}
	if got := count(); got < 3 {
		t.Errorf("the plugin ran %d times in all, want it run again after the 401", got)
	}

	// Another host's root: its kubeconfig's command is not this host's.
	other := write(t, t.TempDir(), map[string][]byte{"etc/kubernetes/admin.conf": kubeconfig("s3cret")})
	_, err = kubeapi.Load(other, "/etc/kubernetes/admin.conf")
	var ke *kubeapi.KubeconfigError
	if !errors.As(err, &ke) || ke.Field != `users["default-auth"].user.exec` || !strings.Contains(err.Error(), "runs as this host") {
		t.Errorf("exec under another root: %v, want a refusal naming the exec entry", err)
	}
}

// TestNodeExecClientCertificate: a plugin may give a client certificate
// and key instead of a token; it is proven in the TLS handshake.
func TestNodeExecClientCertificate(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{ClientAuth: tls.VerifyClientCertIfGiven})
	s.SetNode(kubeapitest.Node("host-node2", corev1.ConditionTrue, "KubeletReady", ""))
	cert, key := s.CA.Client(t, "admin", "system:masters")
	cred, err := json.Marshal(map[string]any{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
		"status": map[string]string{"clientCertificateData": string(cert), "clientKeyData": string(key)}})
	if err != nil {
		t.Fatal(err)
	}
	dir := write(t, t.TempDir(), map[string][]byte{"credential.json": cred})
	plugin := filepath.Join(dir, "get-cert")
	if err := os.WriteFile(plugin, []byte("#!/bin/sh\ncat "+filepath.Join(dir, "credential.json")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string][]byte{"kc": s.KubeconfigOf(t, map[string]any{"exec": map[string]any{
		"apiVersion": "client.authentication.k8s.io/v1", "command": plugin, "interactiveMode": "Never"}})})
	n, err := getNode(t, "", filepath.Join(dir, "kc"), "host-node2")
	mustReady(t, n, err, corev1.ConditionTrue)
}

// TestNodeOIDCAuthProvider: the oidc auth provider's id-token, while it
// is valid, is the bearer token; an expired one with no refresh-token
// fails the request, saying why.
func TestNodeOIDCAuthProvider(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{ClientAuth: tls.VerifyClientCertIfGiven})
	s.SetNode(kubeapitest.Node("host-node3", corev1.ConditionTrue, "KubeletReady", ""))
	jwt := func(exp time.Time) string {
		enc := base64.RawURLEncoding.EncodeToString
		return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(fmt.Sprintf(`{"iss":"https://issuer.example","exp":%d}`, exp.Unix()))) + "." + enc([]byte("sig"))
	}
	valid, expired := jwt(time.Now().Add(time.Hour)), jwt(time.Now().Add(-time.Hour))
	s.AddToken(valid, "oidc:alice", "system:masters")
	// client-go keeps one provider per cluster, issuer and client id: a
	// client id each.
	kubeconfig := func(clientID, idToken string) []byte {
		return s.KubeconfigOf(t, map[string]any{"auth-provider": map[string]any{"name": "oidc", "config": map[string]string{
			"idp-issuer-url": "https://issuer.example", "client-id": clientID, "id-token": idToken}}})
	}
	dir := write(t, t.TempDir(), map[string][]byte{"valid.conf": kubeconfig("valid", valid), "expired.conf": kubeconfig("expired", expired)})
	n, err := getNode(t, "", filepath.Join(dir, "valid.conf"), "host-node3")
	mustReady(t, n, err, corev1.ConditionTrue)
	_, err = getNode(t, "", filepath.Join(dir, "expired.conf"), "host-node3")
	if err == nil || !strings.Contains(err.Error(), "refresh") {
		t.Errorf("an expired id-token without a refresh-token: %v, want an error about the refresh", err)
	}
}
