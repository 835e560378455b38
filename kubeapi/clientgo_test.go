package kubeapi_test

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
)

// headerServer is an API server over TLS (httptest's self-signed
// certificate) that answers GET /api/v1/nodes/<name> with a Node of that
// name and keeps the last request's headers.
type headerServer struct {
	*httptest.Server
	mu   sync.Mutex
	last http.Header
}

func newHeaderServer(t *testing.T) *headerServer {
	t.Helper()
	s := &headerServer{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.last = r.Header.Clone()
		s.mu.Unlock()
		name := strings.TrimPrefix(r.URL.Path, "/api/v1/nodes/")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"kind":"Node","apiVersion":"v1","metadata":{"name":"`+name+`"}}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *headerServer) header() http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// caData is the server's certificate, base64 as certificate-authority-data
// takes it.
func (s *headerServer) caData() string {
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}))
}

// kubeconfig is a kubeconfig for one cluster and one user, their entries'
// fields given as YAML flow mappings' contents.
func kubeconfig(cluster, user string) []byte {
	return []byte("apiVersion: v1\nkind: Config\n" +
		"clusters: [{name: c, cluster: {" + cluster + "}}]\n" +
		"users: [{name: u, user: {" + user + "}}]\n" +
		"contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n")
}

// nodeVia loads kc (written to a file) and GETs Node n0 with it.
func nodeVia(t *testing.T, kc []byte) error {
	t.Helper()
	dir := write(t, t.TempDir(), map[string][]byte{"kc": kc})
	_, err := getNode(t, "/", filepath.Join(dir, "kc"), "n0")
	return err
}

// connectProxy is an HTTP proxy that serves CONNECT only, keeping the
// addresses it was asked for.
func connectProxy(t *testing.T) (url string, asked func() []string) {
	t.Helper()
	var mu sync.Mutex
	var hosts []string
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
		up, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer up.Close()
		down, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer down.Close()
		io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n")
		go io.Copy(up, buf.Reader)
		io.Copy(down, up)
	}))
	t.Cleanup(p.Close)
	return p.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), hosts...)
	}
}

// TestProxyURL: a kubeconfig's proxy-url is honoured (an HTTP CONNECT
// proxy), and it is the only proxy: HTTPS_PROXY in the environment is
// not.
func TestProxyURL(t *testing.T) {
	s := newHeaderServer(t)
	proxy, asked := connectProxy(t)
	host := strings.TrimPrefix(s.URL, "https://")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1") // nothing listens there
	if err := nodeVia(t, kubeconfig("server: '"+s.URL+"', certificate-authority-data: "+s.caData()+", proxy-url: '"+proxy+"'", "token: t")); err != nil {
		t.Fatalf("through proxy-url: %v", err)
	}
	if got := asked(); len(got) != 1 || got[0] != host {
		t.Errorf("the proxy was asked for %v, want [%s]", got, host)
	}
	if err := nodeVia(t, kubeconfig("server: '"+s.URL+"', certificate-authority-data: "+s.caData(), "token: t")); err != nil {
		t.Errorf("without proxy-url, HTTPS_PROXY set: %v, want a direct connection", err)
	}
	if got := asked(); len(got) != 1 {
		t.Errorf("the proxy was asked %d times, want once", len(got))
	}
	// client-go's own validation, in its words, naming the context.
	err := nodeVia(t, kubeconfig("server: '"+s.URL+"', proxy-url: 'ftp://p:21'", "token: t"))
	var ke *kubeapi.KubeconfigError
	if !errors.As(err, &ke) || ke.Field != `contexts["x"]` || !strings.Contains(err.Error(), "proxy-url") {
		t.Errorf("an ftp proxy-url: %v, want client-go's refusal naming the context", err)
	}
}

// TestImpersonation: as, as-uid and as-groups are sent as Impersonate-*
// headers, beside the user's own credential.
func TestImpersonation(t *testing.T) {
	s := newHeaderServer(t)
	if err := nodeVia(t, kubeconfig("server: '"+s.URL+"', certificate-authority-data: "+s.caData(),
		"token: s3cret, as: alice, as-uid: '1234', as-groups: [dev, ops]")); err != nil {
		t.Fatal(err)
	}
	h := s.header()
	if h.Get("Impersonate-User") != "alice" || h.Get("Impersonate-Uid") != "1234" || strings.Join(h.Values("Impersonate-Group"), ",") != "dev,ops" {
		t.Errorf("impersonation headers: %v", h)
	}
	if h.Get("Authorization") != "Bearer s3cret" {
		t.Errorf("Authorization %q, want the token", h.Get("Authorization"))
	}
}

// TestBasicAuth: username and password are sent as basic auth.
func TestBasicAuth(t *testing.T) {
	s := newHeaderServer(t)
	if err := nodeVia(t, kubeconfig("server: '"+s.URL+"', certificate-authority-data: "+s.caData(), "username: admin, password: 'pa ss'")); err != nil {
		t.Fatal(err)
	}
	if got, want := s.header().Get("Authorization"), "Basic "+base64.StdEncoding.EncodeToString([]byte("admin:pa ss")); got != want {
		t.Errorf("Authorization %q, want %q", got, want)
	}
}

// TestInsecureSkipTLSVerify: the operator's choice, as kubectl honours
// it; without it the same self-signed server is refused. With a CA too,
// client-go refuses the kubeconfig, named.
func TestInsecureSkipTLSVerify(t *testing.T) {
	s := newHeaderServer(t)
	if err := nodeVia(t, kubeconfig("server: '"+s.URL+"', insecure-skip-tls-verify: true", "token: t")); err != nil {
		t.Errorf("insecure-skip-tls-verify: %v", err)
	}
	if err := nodeVia(t, kubeconfig("server: '"+s.URL+"'", "token: t")); !errors.Is(err, kubeapi.ErrUnreachable) || !strings.Contains(err.Error(), "x509") {
		t.Errorf("without it: %v, want an x509 error", err)
	}
	err := nodeVia(t, kubeconfig("server: '"+s.URL+"', insecure-skip-tls-verify: true, certificate-authority-data: "+s.caData(), "token: t"))
	var ke *kubeapi.KubeconfigError
	if !errors.As(err, &ke) || ke.Field != `clusters["c"].cluster` || !strings.Contains(err.Error(), "insecure") {
		t.Errorf("insecure beside a CA: %v, want a kubeconfig error naming the cluster", err)
	}
}

// TestTLSServerName: the server's certificate is checked against
// tls-server-name, not the address dialled.
func TestTLSServerName(t *testing.T) {
	s := newHeaderServer(t)
	// httptest's certificate names example.com and 127.0.0.1, not
	// localhost.
	srv := strings.Replace(s.URL, "127.0.0.1", "localhost", 1)
	if err := nodeVia(t, kubeconfig("server: '"+srv+"', certificate-authority-data: "+s.caData(), "token: t")); err == nil || !strings.Contains(err.Error(), "x509") {
		t.Errorf("localhost without tls-server-name: %v, want an x509 error", err)
	}
	if err := nodeVia(t, kubeconfig("server: '"+srv+"', certificate-authority-data: "+s.caData()+", tls-server-name: example.com", "token: t")); err != nil {
		t.Errorf("with tls-server-name: %v", err)
	}
}

// TestRemovedAuthProvider: gcp left client-go for an exec plugin;
// client-go's refusal says which, named by the field.
func TestRemovedAuthProvider(t *testing.T) {
	dir := write(t, t.TempDir(), map[string][]byte{"kc": kubeconfig("server: 'https://h:6443'", "auth-provider: {name: gcp}")})
	_, err := kubeapi.Load("/", filepath.Join(dir, "kc"))
	var ke *kubeapi.KubeconfigError
	if !errors.As(err, &ke) || ke.Field != `users["u"].user.auth-provider` || !strings.Contains(err.Error(), "gke-gcloud-auth-plugin") {
		t.Errorf("gcp auth provider: %v, want client-go's refusal naming the field", err)
	}
}

// TestRESTConfigNamesNoFile: every file the kubeconfig names (relative
// ones against its directory) is read by Load and inlined: client-go,
// and clientsets built from RESTConfig, never open one.
func TestRESTConfigNamesNoFile(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	s.SetNode(kubeapitest.Node("host-node0", corev1.ConditionTrue, "KubeletReady", ""))
	cert, key := s.CA.Client(t, "system:node:host-node0", "system:nodes")
	kc := strings.Replace(string(s.Kubeconfig(t, map[string]string{"client-certificate": "pki/c.pem", "client-key": "pki/k.pem"})),
		"certificate-authority-data: "+base64.StdEncoding.EncodeToString(s.CA.PEM), "certificate-authority: pki/ca.crt", 1)
	dir := write(t, t.TempDir(), map[string][]byte{"kc": []byte(kc), "pki/c.pem": cert, "pki/k.pem": key, "pki/ca.crt": s.CA.PEM})
	cfg, err := kubeapi.Load("/", filepath.Join(dir, "kc"))
	if err != nil {
		t.Fatal(err)
	}
	c := kubeapi.NewClient(cfg, kubeapi.Options{Timeout: 5 * time.Second})
	defer c.Close()
	// Gone now: only the bytes Load read are used.
	if err := os.RemoveAll(filepath.Join(dir, "pki")); err != nil {
		t.Fatal(err)
	}
	n, err := c.Node(context.Background(), "host-node0")
	mustReady(t, n, err, corev1.ConditionTrue)
	rc := c.RESTConfig()
	if rc.CAFile != "" || rc.CertFile != "" || rc.KeyFile != "" || rc.BearerTokenFile != "" {
		t.Errorf("rest.Config names files: CA %q cert %q key %q token %q", rc.CAFile, rc.CertFile, rc.KeyFile, rc.BearerTokenFile)
	}
	if string(rc.CAData) != string(s.CA.PEM) || string(rc.CertData) != string(cert) || string(rc.KeyData) != string(key) {
		t.Errorf("rest.Config lacks the files' bytes inline")
	}
	if rc.Dial == nil || rc.Timeout != 5*time.Second {
		t.Errorf("rest.Config without the client's dialer or timeout: %v", rc.Timeout)
	}
	rc.Host = "changed"
	if c.RESTConfig().Host == "changed" {
		t.Errorf("RESTConfig returned the client's own, not a copy")
	}
}

// TestRootConfinesFiles: under another host's root a kubeconfig naming a
// file through a link or a path that leaves the root reads the root's
// file of that name, never this host's.
func TestRootConfinesFiles(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	cert, key := s.CA.Client(t, "system:node:host-node0", "system:nodes")
	host := write(t, t.TempDir(), map[string][]byte{"k.pem": append(cert, key...)})
	hostPEM := filepath.Join(host, "k.pem")
	for name, c := range map[string]struct {
		pem  string                  // the path the kubeconfig names
		link func(root string) error // made below the root, or nil
	}{
		"absolute link": {"/etc/kubernetes/k.pem", func(root string) error { return os.Symlink(hostPEM, filepath.Join(root, "etc/kubernetes/k.pem")) }},
		"relative link": {"/etc/kubernetes/k.pem", func(root string) error {
			return os.Symlink(strings.Repeat("../", 20)+strings.TrimPrefix(hostPEM, "/"), filepath.Join(root, "etc/kubernetes/k.pem"))
		}},
		"dot-dot path":  {strings.Repeat("../", 20) + strings.TrimPrefix(hostPEM, "/"), nil},
		"absolute path": {hostPEM, nil},
	} {
		t.Run(name, func(t *testing.T) {
			root := write(t, t.TempDir(), map[string][]byte{
				"etc/kubernetes/kc": s.Kubeconfig(t, map[string]string{"client-certificate": c.pem, "client-key": c.pem})})
			if c.link != nil {
				if err := c.link(root); err != nil {
					t.Fatal(err)
				}
			}
			_, err := kubeapi.Load(root, "/etc/kubernetes/kc")
			var ke *kubeapi.KubeconfigError
			if !errors.As(err, &ke) || ke.Field != `users["default-auth"].user.client-certificate` {
				t.Errorf("Load read %s, a file of this host, not of the root: %v", c.pem, err)
			}
		})
	}
}

// TestEndpoint: kubeconfigs reaching the same server the same way share
// an endpoint whoever they log in as; another CA, TLS server name, proxy
// or skipped verification is another endpoint.
func TestEndpoint(t *testing.T) {
	s := newHeaderServer(t)
	other := kubeapitest.NewCA(t, "other")
	ca := "server: '" + s.URL + "', certificate-authority-data: " + s.caData()
	endpoint := func(cluster, user string) string {
		t.Helper()
		dir := write(t, t.TempDir(), map[string][]byte{"kc": kubeconfig(cluster, user)})
		cfg, err := kubeapi.Load("/", filepath.Join(dir, "kc"))
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Endpoint()
	}
	base := endpoint(ca, "token: a")
	if got := endpoint(ca, "username: b, password: c"); got != base {
		t.Errorf("another user: endpoint %q, want %q", got, base)
	}
	for name, cluster := range map[string]string{
		"another CA":      "server: '" + s.URL + "', certificate-authority-data: " + base64.StdEncoding.EncodeToString(other.PEM),
		"system roots":    "server: '" + s.URL + "'",
		"insecure":        "server: '" + s.URL + "', insecure-skip-tls-verify: true",
		"tls-server-name": ca + ", tls-server-name: example.com",
		"proxy":           ca + ", proxy-url: 'http://127.0.0.1:3128'",
	} {
		if got := endpoint(cluster, "token: a"); got == base {
			t.Errorf("%s: the same endpoint %q", name, got)
		}
	}
	if endpoint("server: '"+s.URL+"'", "token: a") == endpoint("server: '"+s.URL+"', insecure-skip-tls-verify: true", "token: a") {
		t.Errorf("system roots and insecure: the same endpoint")
	}
}

// TestOIDCCAInlined: the oidc auth provider's idp-certificate-authority
// file (relative to the kubeconfig) is read by Load and handed to
// client-go as idp-certificate-authority-data; a missing one is named.
func TestOIDCCAInlined(t *testing.T) {
	ca := kubeapitest.NewCA(t, "issuer")
	oidc := func(caPath string) string {
		return "auth-provider: {name: oidc, config: {idp-issuer-url: 'https://issuer.example', client-id: ca-test, id-token: x, idp-certificate-authority: " + caPath + "}}"
	}
	dir := write(t, t.TempDir(), map[string][]byte{
		"kc": kubeconfig("server: 'https://h:6443'", oidc("pki/issuer.crt")), "gone.conf": kubeconfig("server: 'https://h:6443'", oidc("pki/gone.crt")),
		"pki/issuer.crt": ca.PEM,
	})
	cfg, err := kubeapi.Load("/", filepath.Join(dir, "kc"))
	if err != nil {
		t.Fatal(err)
	}
	c := kubeapi.NewClient(cfg, kubeapi.Options{})
	defer c.Close()
	got := c.RESTConfig().AuthProvider.Config
	if _, named := got["idp-certificate-authority"]; named || got["idp-certificate-authority-data"] != base64.StdEncoding.EncodeToString(ca.PEM) {
		t.Errorf("auth provider config %v, want the CA inline and no path", got)
	}
	_, err = kubeapi.Load("/", filepath.Join(dir, "gone.conf"))
	var ke *kubeapi.KubeconfigError
	if !errors.As(err, &ke) || ke.Field != `users["u"].user.auth-provider.config.idp-certificate-authority` || !strings.Contains(err.Error(), filepath.Join(dir, "pki/gone.crt")) {
		t.Errorf("missing issuer CA: %v, want an error naming the field and the file", err)
	}
}
