// Package kubeapitest is a fake Kubernetes API server for tests of
// kubeapi's users: it serves GET /api/v1/nodes/<name> over TLS, with a
// CA generated for the test, and GET /api/v1/namespaces/<ns>/pods/<name>;
// it authenticates client certificates (CN is the user, O the groups) and
// bearer tokens, and authorizes like the Node authorizer:
// system:node:<name> may read only Node <name> and the pods bound to it,
// members of system:masters anything.
package kubeapitest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// CA is a throw-away certificate authority.
type CA struct {
	Cert *x509.Certificate
	PEM  []byte // the CA certificate
	key  *ecdsa.PrivateKey
}

// NewCA makes a CA named name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, PEM: pemBlock("CERTIFICATE", der), key: key}
}

// Client issues a client certificate for user cn in groups orgs, and
// returns it and its key as PEM.
func (ca *CA) Client(t testing.TB, cn string, orgs ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	key := newKey(t)
	der := ca.sign(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: cn, Organization: orgs}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, &key.PublicKey)
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", kb)
}

func (ca *CA) serving(t testing.TB) tls.Certificate {
	t.Helper()
	key := newKey(t)
	der := ca.sign(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "kube-apiserver"}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}, &key.PublicKey)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func (ca *CA) sign(t testing.TB, tmpl *x509.Certificate, pub any) []byte {
	t.Helper()
	tmpl.SerialNumber = serial(t)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, pub, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// Options configure a Server.
type Options struct {
	// ClientAuth is the TLS client certificate policy; the zero value
	// means tls.RequireAndVerifyClientCert. Token tests use
	// tls.VerifyClientCertIfGiven.
	ClientAuth tls.ClientAuthType
	// Listener, when set, is served instead of a new one on 127.0.0.1
	// (a listener opened in another network namespace).
	Listener net.Listener
}

// Server is the fake API server.
type Server struct {
	URL string
	CA  *CA // signs the serving certificate; client certificates it signed are trusted

	mu     sync.Mutex
	nodes  map[string]*corev1.Node
	pods   map[string]*corev1.Pod // by namespace/name
	tokens map[string]user
	gets   map[string]int // GETs per path
}

type user struct {
	name   string
	groups []string
}

// NewServer starts a fake API server, closed when the test ends.
func NewServer(t testing.TB, o Options) *Server {
	t.Helper()
	s := &Server{CA: NewCA(t, "kubernetes"), nodes: map[string]*corev1.Node{}, pods: map[string]*corev1.Pod{},
		tokens: map[string]user{}, gets: map[string]int{}}
	if o.ClientAuth == tls.NoClientCert {
		o.ClientAuth = tls.RequireAndVerifyClientCert
	}
	pool := x509.NewCertPool()
	pool.AddCert(s.CA.Cert)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	if o.Listener != nil {
		srv.Listener.Close()
		srv.Listener = o.Listener
	}
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{s.CA.serving(t)}, ClientCAs: pool, ClientAuth: o.ClientAuth}
	// The bad-CA tests make the server log handshake errors; they are expected.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// SetNode adds or replaces a Node.
func (s *Server) SetNode(n *corev1.Node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes[n.Name] = n.DeepCopy()
}

// SetPod adds or replaces a Pod.
func (s *Server) SetPod(p *corev1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pods[p.Namespace+"/"+p.Name] = p.DeepCopy()
}

// Gets is how many GETs path was asked (whatever the answer).
func (s *Server) Gets(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets[path]
}

// AddToken makes token authenticate as user in groups.
func (s *Server) AddToken(token, name string, groups ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = user{name, groups}
}

// Kubeconfig is a kubeconfig for s with its CA inline and the given
// user entry (e.g. {"client-certificate": "kubelet.pem", "client-key":
// "kubelet.pem"}).
func (s *Server) Kubeconfig(t testing.TB, userFields map[string]string) []byte {
	t.Helper()
	kc := map[string]any{
		"apiVersion": "v1", "kind": "Config", "preferences": map[string]any{},
		"clusters": []any{map[string]any{"name": "default-cluster", "cluster": map[string]any{
			"server": s.URL, "certificate-authority-data": s.CA.PEM,
		}}},
		"contexts": []any{map[string]any{"name": "default-context", "context": map[string]any{
			"cluster": "default-cluster", "user": "default-auth", "namespace": "default",
		}}},
		"current-context": "default-context",
		"users":           []any{map[string]any{"name": "default-auth", "user": userFields}},
	}
	b, err := yaml.Marshal(kc) // []byte fields become base64, as kubeconfig -data fields are
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	u, ok := s.authenticate(r)
	if !ok {
		status(w, http.StatusUnauthorized, "Unauthorized", "Unauthorized")
		return
	}
	s.mu.Lock()
	s.gets[r.URL.Path]++
	s.mu.Unlock()
	if r.Method == http.MethodGet {
		if ns, name, ok := podPath(r.URL.Path); ok {
			s.servePod(w, u, ns, name)
			return
		}
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/api/v1/nodes/")
	if r.Method != http.MethodGet || !ok || name == "" || strings.Contains(name, "/") {
		status(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	if !authorized(u, name) {
		status(w, http.StatusForbidden, "Forbidden", fmt.Sprintf(
			"nodes %q is forbidden: User %q cannot get resource \"nodes\" in API group \"\" at the cluster scope%s",
			name, u.name, nodeAuthorizerReason(u, name)))
		return
	}
	s.mu.Lock()
	n, ok := s.nodes[name]
	s.mu.Unlock()
	if !ok {
		status(w, http.StatusNotFound, "NotFound", fmt.Sprintf("nodes %q not found", name))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(n)
}

// podPath splits /api/v1/namespaces/<ns>/pods/<name>.
func podPath(path string) (ns, name string, ok bool) {
	rest, ok := strings.CutPrefix(path, "/api/v1/namespaces/")
	if !ok {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[1] != "pods" || parts[0] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[0], parts[2], true
}

// servePod answers a pod GET; a node may read the pods bound to it (the
// Node authorizer answers 403 for others, whether they exist or not).
func (s *Server) servePod(w http.ResponseWriter, u user, ns, name string) {
	s.mu.Lock()
	p, ok := s.pods[ns+"/"+name]
	s.mu.Unlock()
	if !slices.Contains(u.groups, "system:masters") && (!ok || !authorized(u, p.Spec.NodeName)) {
		status(w, http.StatusForbidden, "Forbidden", fmt.Sprintf(
			"pods %q is forbidden: User %q cannot get resource \"pods\" in API group \"\" in the namespace %q: no relationship found between node and this object",
			name, u.name, ns))
		return
	}
	if !ok {
		status(w, http.StatusNotFound, "NotFound", fmt.Sprintf("pods %q not found", name))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(p)
}

func (s *Server) authenticate(r *http.Request) (user, bool) {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		u, ok := s.tokens[tok]
		return u, ok
	}
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
		c := r.TLS.VerifiedChains[0][0]
		return user{c.Subject.CommonName, c.Subject.Organization}, true
	}
	return user{}, false // anonymous requests are not enabled
}

func authorized(u user, node string) bool {
	if slices.Contains(u.groups, "system:masters") {
		return true
	}
	return slices.Contains(u.groups, "system:nodes") && u.name == "system:node:"+node
}

func nodeAuthorizerReason(u user, node string) string {
	if self, ok := strings.CutPrefix(u.name, "system:node:"); ok {
		return fmt.Sprintf(": node '%s' cannot read '%s', only its own Node object", self, node)
	}
	return ""
}

func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Reason: metav1.StatusReason(reason), Code: int32(code),
	})
}

// Node is a Node with a Ready condition of the given status (True, False,
// Unknown; "" for none), 4 CPUs and 8Gi allocatable of 6 and 16Gi.
func Node(name string, ready corev1.ConditionStatus, reason, message string) *corev1.Node {
	n := &corev1.Node{
		TypeMeta:   metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("6"), corev1.ResourceMemory: resource.MustParse("16Gi")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
		},
	}
	if ready != "" {
		n.Status.Conditions = []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory"},
			{Type: corev1.NodeReady, Status: ready, Reason: reason, Message: message},
		}
	}
	return n
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
