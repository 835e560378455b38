// Package kubeapitest is a fake Kubernetes API server for tests of
// kubeapi's users, over TLS with a CA generated for the test. It serves
// Nodes (GET, a strategic or JSON merge PATCH of spec.unschedulable,
// DELETE), pods (GET, the
// list of a Node's pods by fieldSelector spec.nodeName, in pages, and
// their watch, with resourceVersions and 410 Gone for those older than the
// last Compact),
// policy/v1 PodDisruptionBudgets (list) and the Eviction subresource,
// which honours them as the real one does: 429 naming the budget while
// its status.disruptionsAllowed is 0, else one disruption less and the
// pod deleted (or, with KeepEvicted, marked for deletion as a kubelet
// would still have to finish it), and core/v1 Events (create, kept for
// Events; RefuseEvents answers them with an error instead).
//
// It authenticates client certificates (CN is the user, O the groups) and
// bearer tokens, and authorizes like the Node authorizer with
// NodeRestriction: system:node:<name> may read and patch only Node <name>
// (not delete it), read, list and evict the pods bound to it, create
// Events, and read no PodDisruptionBudget; members of system:masters may
// do anything.
package kubeapitest

import (
	"bytes"
	"context"
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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
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

// ServingPEM issues a serving certificate for 127.0.0.1 and localhost,
// as PEM: for a real API server a test starts.
func (ca *CA) ServingPEM(t testing.TB) (certPEM, keyPEM []byte) {
	t.Helper()
	c := ca.serving(t)
	kb, err := x509.MarshalECPrivateKey(c.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	return pemBlock("CERTIFICATE", c.Certificate[0]), pemBlock("EC PRIVATE KEY", kb)
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

	srv *httptest.Server

	mu     sync.Mutex
	nodes  map[string]*corev1.Node
	pods   map[string]*corev1.Pod // by namespace/name
	pdbs   map[string]*policyv1.PodDisruptionBudget
	cms    map[string]*corev1.ConfigMap // by namespace/name
	tokens map[string]user
	gets   map[string]int // requests per path
	evicts []string       // namespace/name of every eviction granted
	// patches are the Node patches taken, in order.
	patches []Patch

	// created are the Events created, in order.
	created []corev1.Event

	// PodPage is the most pods one list answer holds (its limit, when
	// smaller); the rest follow with a continue token. 0: no limit of its
	// own.
	PodPage int
	// KeepEvicted leaves an evicted pod in place with a deletionTimestamp
	// (a kubelet still has to stop it) until DeletePod; else it goes at
	// once.
	KeepEvicted bool
	// RefuseEvents, when not 0, is the status every Event's creation is
	// answered with (403, 500), keeping none: an API server or an
	// identity that does not take Events.
	RefuseEvents int

	// Pod history for watches: every change gets the next resource
	// version; events at or below compacted are forgotten.
	rv        int64
	compacted int64
	events    []podEvent
	changed   chan struct{} // closed (and replaced) at every change
	stalled   chan struct{} // non-nil: every request waits until it is closed
	// endWatches is closed (and replaced) to end the streaming watches.
	endWatches chan struct{}
}

type podEvent struct {
	rv  int64
	typ string
	pod *corev1.Pod
}

type user struct {
	name   string
	groups []string
}

// NewServer starts a fake API server, closed when the test ends.
func NewServer(t testing.TB, o Options) *Server {
	t.Helper()
	s := &Server{CA: NewCA(t, "kubernetes"), nodes: map[string]*corev1.Node{}, pods: map[string]*corev1.Pod{},
		pdbs: map[string]*policyv1.PodDisruptionBudget{}, cms: map[string]*corev1.ConfigMap{}, tokens: map[string]user{}, gets: map[string]int{},
		changed: make(chan struct{}), endWatches: make(chan struct{})}
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
	s.URL, s.srv = srv.URL, srv
	return s
}

// Close stops the server before the test ends (an API server that went
// away); it may be called again.
func (s *Server) Close() { s.srv.Close() }

// SetNode adds or replaces a Node.
func (s *Server) SetNode(n *corev1.Node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes[n.Name] = n.DeepCopy()
}

// SetConfigMap adds or replaces a ConfigMap, which every authenticated
// user may read (kubeadm lets nodes and bootstrap tokens read
// kube-system/kubelet-config).
func (s *Server) SetConfigMap(cm *corev1.ConfigMap) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cms[cm.Namespace+"/"+cm.Name] = cm.DeepCopy()
}

// serveConfigMap answers GET /api/v1/namespaces/<ns>/configmaps/<name>.
func (s *Server) serveConfigMap(w http.ResponseWriter, r *http.Request) {
	rest, _ := strings.CutPrefix(r.URL.Path, "/api/v1/namespaces/")
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[1] != "configmaps" {
		status(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cm, ok := s.cms[parts[0]+"/"+parts[2]]
	if !ok {
		status(w, http.StatusNotFound, "NotFound", fmt.Sprintf("configmaps %q not found", parts[2]))
		return
	}
	out := cm.DeepCopy()
	out.Kind, out.APIVersion = "ConfigMap", "v1"
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// SetPod adds or replaces a Pod (an ADDED or MODIFIED event for its
// watchers).
func (s *Server) SetPod(p *corev1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	typ := "MODIFIED"
	if _, ok := s.pods[p.Namespace+"/"+p.Name]; !ok {
		typ = "ADDED"
	}
	s.recordLocked(typ, p.DeepCopy())
}

// DeletePod removes a Pod (a DELETED event), as its kubelet does once it
// stopped it.
func (s *Server) DeletePod(namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.pods[namespace+"/"+name]; ok {
		s.recordLocked("DELETED", p.DeepCopy())
	}
}

func (s *Server) recordLocked(typ string, p *corev1.Pod) {
	s.rv++
	p.ResourceVersion = strconv.FormatInt(s.rv, 10)
	if typ == "DELETED" {
		delete(s.pods, p.Namespace+"/"+p.Name)
	} else {
		s.pods[p.Namespace+"/"+p.Name] = p
	}
	s.events = append(s.events, podEvent{rv: s.rv, typ: typ, pod: p})
	close(s.changed)
	s.changed = make(chan struct{})
}

// Compact forgets the pods' history, as etcd's compaction does: a watch
// from an older resourceVersion gets 410 Gone.
func (s *Server) Compact() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compacted, s.events = s.rv, nil
}

// Stall makes every request wait, as an overloaded or partitioned API
// server does, until the returned function is called; watches already
// streaming stay open and quiet.
func (s *Server) Stall() (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	s.stalled = ch
	close(s.changed) // quiet the streaming watches
	s.changed = make(chan struct{})
	return sync.OnceFunc(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.stalled = nil
		close(ch)
		close(s.changed)
		s.changed = make(chan struct{})
	})
}

// EndWatches ends the watches that are streaming, as an API server
// restart does; their clients watch again from where they were.
func (s *Server) EndWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.endWatches)
	s.endWatches = make(chan struct{})
}

// GetNode returns a copy of Node name, nil when there is none.
func (s *Server) GetNode(name string) *corev1.Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.nodes[name]; ok {
		return n.DeepCopy()
	}
	return nil
}

// GetPod returns a copy of pod namespace/name, nil when there is none.
func (s *Server) GetPod(namespace, name string) *corev1.Pod {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.pods[namespace+"/"+name]; ok {
		return p.DeepCopy()
	}
	return nil
}

// SetPDB adds or replaces a PodDisruptionBudget, status included (the
// fake has no disruption controller: the test sets disruptionsAllowed).
func (s *Server) SetPDB(p *policyv1.PodDisruptionBudget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pdbs[p.Namespace+"/"+p.Name] = p.DeepCopy()
}

// Evictions are the evictions granted, as namespace/name, in order.
func (s *Server) Evictions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.evicts)
}

// Events are the Events created, in order.
func (s *Server) Events() []corev1.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]corev1.Event, len(s.created))
	for i, e := range s.created {
		out[i] = *e.DeepCopy()
	}
	return out
}

// Gets is how many requests path was asked, whatever the method and the
// answer.
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
	user := map[string]any{}
	for k, v := range userFields {
		user[k] = v
	}
	return s.KubeconfigOf(t, user)
}

// KubeconfigOf is Kubeconfig with user fields of any shape (an exec
// entry).
func (s *Server) KubeconfigOf(t testing.TB, userFields map[string]any) []byte {
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

// endWatchesKey is the request context's key of the endWatches channel in
// force when the request arrived.
type endWatchesKey struct{}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	stalled := s.stalled
	// A watch ends with the EndWatches call after its arrival, even one
	// still on its way to streaming then: taken when it streams, the
	// channel missed an EndWatches in between, and the watch went on
	// (TestPodCacheStalledAPIServer waited for a failure in vain, 2 runs
	// in 40 under load).
	r = r.WithContext(context.WithValue(r.Context(), endWatchesKey{}, s.endWatches))
	s.mu.Unlock()
	if stalled != nil {
		select {
		case <-stalled:
		case <-r.Context().Done():
			return
		}
	}
	u, ok := s.authenticate(r)
	if !ok {
		status(w, http.StatusUnauthorized, "Unauthorized", "Unauthorized")
		return
	}
	s.mu.Lock()
	s.gets[r.URL.Path]++
	s.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api/v1/pods":
		s.servePods(w, r, u)
		return
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/apis/policy/v1/namespaces/"):
		s.listPDBs(w, r, u)
		return
	case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/configmaps/"):
		s.serveConfigMap(w, r)
		return
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/") && strings.HasSuffix(r.URL.Path, "/events"):
		s.createEvent(w, r, u)
		return
	}
	if ns, name, sub, ok := podPath(r.URL.Path); ok {
		switch {
		case r.Method == http.MethodGet && sub == "":
			s.servePod(w, u, ns, name)
		case r.Method == http.MethodPost && sub == "eviction":
			s.evict(w, r, u, ns, name)
		default:
			status(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		}
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/api/v1/nodes/")
	name, statusPatch := strings.CutSuffix(name, "/status")
	statusPatch = statusPatch && r.Method == http.MethodPatch
	if !ok || name == "" || strings.Contains(name, "/") || (strings.HasSuffix(r.URL.Path, "/status") && !statusPatch) {
		status(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	verb := map[string]string{http.MethodGet: "get", http.MethodPatch: "patch", http.MethodDelete: "delete"}[r.Method]
	if verb == "" {
		status(w, http.StatusMethodNotAllowed, "MethodNotAllowed", r.Method+" is not supported")
		return
	}
	// The Node authorizer and NodeRestriction let a kubelet read and
	// patch its own Node (cordon it); deleting it is an administrator's.
	if !authorized(u, name) || (verb == "delete" && !master(u)) {
		status(w, http.StatusForbidden, "Forbidden", fmt.Sprintf(
			"nodes %q is forbidden: User %q cannot %s resource \"nodes\" in API group \"\" at the cluster scope%s",
			name, u.name, verb, nodeAuthorizerReason(u, name)))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.nodes[name]
	if !ok {
		status(w, http.StatusNotFound, "NotFound", fmt.Sprintf("nodes %q not found", name))
		return
	}
	switch verb {
	case "patch":
		body, err := io.ReadAll(r.Body)
		if err != nil {
			status(w, http.StatusBadRequest, "BadRequest", err.Error())
			return
		}
		s.patches = append(s.patches, Patch{Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Body: string(body)})
		r.Body = io.NopCloser(bytes.NewReader(body))
		patch := mergePatchUnschedulable
		if statusPatch {
			patch = strategicPatchConditions
		}
		if err := patch(r, n); err != nil {
			status(w, http.StatusUnsupportedMediaType, "UnsupportedMediaType", err.Error())
			return
		}
	case "delete":
		delete(s.nodes, name)
		status(w, http.StatusOK, "", "")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(n)
}

// mergePatchUnschedulable applies a patch that may set only
// spec.unschedulable, to n: a strategic merge patch (what kubectl cordon
// sends) or a JSON merge patch, which for that field are the same.
func mergePatchUnschedulable(r *http.Request, n *corev1.Node) error {
	if ct := r.Header.Get("Content-Type"); ct != "application/strategic-merge-patch+json" && ct != "application/merge-patch+json" {
		return fmt.Errorf("the fake takes application/strategic-merge-patch+json or application/merge-patch+json, not %q", ct)
	}
	var patch struct {
		Spec map[string]*bool `json:"spec"`
	}
	d := json.NewDecoder(r.Body)
	d.DisallowUnknownFields()
	if err := d.Decode(&patch); err != nil {
		return fmt.Errorf("the fake patches spec.unschedulable only: %w", err)
	}
	for k, v := range patch.Spec {
		if k != "unschedulable" {
			return fmt.Errorf("the fake patches spec.unschedulable only, not spec.%s", k)
		}
		n.Spec.Unschedulable = v != nil && *v
	}
	return nil
}

// strategicPatchConditions applies a strategic merge patch that may set
// only status.conditions (what node-problem-detector sends to
// nodes/NAME/status): each condition replaces the one of its type, the
// others stay, as the API server merges them by type.
func strategicPatchConditions(r *http.Request, n *corev1.Node) error {
	if ct := r.Header.Get("Content-Type"); ct != "application/strategic-merge-patch+json" {
		return fmt.Errorf("the fake takes application/strategic-merge-patch+json on nodes/status, not %q", ct)
	}
	var patch struct {
		Status struct {
			Conditions []corev1.NodeCondition `json:"conditions"`
		} `json:"status"`
	}
	d := json.NewDecoder(r.Body)
	d.DisallowUnknownFields()
	if err := d.Decode(&patch); err != nil {
		return fmt.Errorf("the fake patches status.conditions only: %w", err)
	}
	for _, c := range patch.Status.Conditions {
		i := slices.IndexFunc(n.Status.Conditions, func(o corev1.NodeCondition) bool { return o.Type == c.Type })
		if i < 0 {
			n.Status.Conditions = append(n.Status.Conditions, c)
		} else {
			n.Status.Conditions[i] = c
		}
	}
	return nil
}

// Patch is one PATCH of a Node the server took: its path, content type
// and body as sent.
type Patch struct {
	Path, ContentType, Body string
}

// Patches are the Node patches taken (authorized, Node found), in order.
func (s *Server) Patches() []Patch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.patches)
}

// listPods answers GET /api/v1/pods?fieldSelector=spec.nodeName=<node>
// (every pod when !ok), sorted by namespace/name, in pages of PodPage (or
// the request's limit), each with the server's resourceVersion.
func (s *Server) listPods(w http.ResponseWriter, r *http.Request, node string, ok bool) {
	s.mu.Lock()
	rv := strconv.FormatInt(s.rv, 10)
	var all []corev1.Pod
	for _, p := range s.pods {
		if !ok || p.Spec.NodeName == node {
			all = append(all, *p.DeepCopy())
		}
	}
	page := s.PodPage
	s.mu.Unlock()
	slices.SortFunc(all, func(a, b corev1.Pod) int { return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name) })
	if l, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && l > 0 && (page == 0 || l < page) {
		page = l
	}
	from := 0
	if c := r.URL.Query().Get("continue"); c != "" {
		var err error
		if from, err = strconv.Atoi(c); err != nil || from < 0 || from > len(all) {
			status(w, http.StatusBadRequest, "BadRequest", "bad continue token "+c)
			return
		}
	}
	l := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"},
		ListMeta: metav1.ListMeta{ResourceVersion: rv}, Items: all[from:]}
	if page > 0 && len(l.Items) > page {
		l.Items = l.Items[:page]
		l.Continue = strconv.Itoa(from + page)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(l)
}

// listPDBs answers GET /apis/policy/v1/namespaces/<ns>/poddisruptionbudgets.
func (s *Server) listPDBs(w http.ResponseWriter, r *http.Request, u user) {
	rest := strings.TrimPrefix(r.URL.Path, "/apis/policy/v1/namespaces/")
	ns, res, ok := strings.Cut(rest, "/")
	if !ok || res != "poddisruptionbudgets" {
		status(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	if !master(u) {
		status(w, http.StatusForbidden, "Forbidden", fmt.Sprintf(
			"poddisruptionbudgets.policy is forbidden: User %q cannot list resource \"poddisruptionbudgets\" in API group \"policy\" in the namespace %q", u.name, ns))
		return
	}
	s.mu.Lock()
	l := policyv1.PodDisruptionBudgetList{TypeMeta: metav1.TypeMeta{Kind: "PodDisruptionBudgetList", APIVersion: "policy/v1"}}
	for _, p := range s.pdbs {
		if p.Namespace == ns {
			l.Items = append(l.Items, *p.DeepCopy())
		}
	}
	s.mu.Unlock()
	slices.SortFunc(l.Items, func(a, b policyv1.PodDisruptionBudget) int { return strings.Compare(a.Name, b.Name) })
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(l)
}

// evict answers POST .../pods/<name>/eviction as the API server does: the
// pod's one PodDisruptionBudget must allow a disruption (429 with a
// DisruptionBudget cause otherwise; two budgets are a 500), the UID
// precondition must hold (409).
func (s *Server) evict(w http.ResponseWriter, r *http.Request, u user, ns, name string) {
	s.mu.Lock()
	bound, ok := s.pods[ns+"/"+name]
	s.mu.Unlock()
	// A kubelet may evict the pods bound to its Node (NodeRestriction).
	if !master(u) && (!ok || !authorized(u, bound.Spec.NodeName)) {
		status(w, http.StatusForbidden, "Forbidden", fmt.Sprintf(
			"pods %q is forbidden: User %q cannot create resource \"pods/eviction\" in API group \"\" in the namespace %q", name, u.name, ns))
		return
	}
	var ev policyv1.Eviction
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil || ev.Kind != "Eviction" || ev.APIVersion != "policy/v1" || ev.Name != name || ev.Namespace != ns {
		status(w, http.StatusBadRequest, "BadRequest", fmt.Sprintf("not a policy/v1 Eviction of %s/%s (%v)", ns, name, err))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pods[ns+"/"+name]
	if !ok {
		status(w, http.StatusNotFound, "NotFound", fmt.Sprintf("pods %q not found", name))
		return
	}
	if o := ev.DeleteOptions; o != nil && o.Preconditions != nil && o.Preconditions.UID != nil && *o.Preconditions.UID != p.UID {
		status(w, http.StatusConflict, "Conflict", fmt.Sprintf(
			"Operation cannot be fulfilled on Pod %q: Precondition failed: UID in precondition: %s, UID in object meta: %s", name, *o.Preconditions.UID, p.UID))
		return
	}
	var budgets []*policyv1.PodDisruptionBudget
	for _, b := range s.pdbs {
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if b.Namespace == ns && err == nil && sel.Matches(labels.Set(p.Labels)) {
			budgets = append(budgets, b)
		}
	}
	terminal := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	switch {
	case len(budgets) > 1:
		status(w, http.StatusInternalServerError, "InternalError", "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.")
		return
	case len(budgets) == 1 && !terminal && p.DeletionTimestamp == nil:
		b := budgets[0]
		if b.Status.DisruptionsAllowed <= 0 {
			writeStatus(w, metav1.Status{Status: metav1.StatusFailure, Code: http.StatusTooManyRequests, Reason: metav1.StatusReasonTooManyRequests,
				Message: "Cannot evict pod as it would violate the pod's disruption budget.",
				Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "DisruptionBudget", Message: fmt.Sprintf(
					"The disruption budget %s needs %d healthy pods and has %d currently", b.Name, b.Status.DesiredHealthy, b.Status.CurrentHealthy)}}}})
			return
		}
		b.Status.DisruptionsAllowed--
	}
	s.evicts = append(s.evicts, ns+"/"+name)
	if s.KeepEvicted {
		now := metav1.Now()
		p = p.DeepCopy()
		p.DeletionTimestamp = &now
		s.recordLocked("MODIFIED", p)
	} else {
		s.recordLocked("DELETED", p.DeepCopy())
	}
	writeStatus(w, metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusCreated})
}

// createEvent answers POST /api/v1/namespaces/<ns>/events as the API
// server does for a core/v1 Event without eventTime (client-go's
// tools/record kind): the Node authorizer lets any node create one (its
// rules do not look at whose object it is about), a master too; the
// Event's namespace is the path's, and a cluster-wide object's Event
// (involvedObject without a namespace) lives in default; the name is a
// DNS subdomain not taken yet; the message at most 1024 bytes; the type
// Normal or Warning. It answers 201 with the Event, or RefuseEvents.
func (s *Server) createEvent(w http.ResponseWriter, r *http.Request, u user) {
	ns := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/"), "/events")
	if ns == "" || strings.Contains(ns, "/") {
		status(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	if !master(u) && !slices.Contains(u.groups, "system:nodes") {
		status(w, http.StatusForbidden, "Forbidden", fmt.Sprintf(
			"events is forbidden: User %q cannot create resource \"events\" in API group \"\" in the namespace %q", u.name, ns))
		return
	}
	s.mu.Lock()
	refuse := s.RefuseEvents
	s.mu.Unlock()
	if refuse != 0 {
		status(w, refuse, http.StatusText(refuse), "the fake refuses Events (RefuseEvents)")
		return
	}
	var e corev1.Event
	d := json.NewDecoder(r.Body)
	d.DisallowUnknownFields()
	if err := d.Decode(&e); err != nil || e.Kind != "Event" || e.APIVersion != "v1" {
		status(w, http.StatusBadRequest, "BadRequest", fmt.Sprintf("not a v1 Event (%v)", err))
		return
	}
	var invalid []string
	if e.Namespace != "" && e.Namespace != ns {
		invalid = append(invalid, fmt.Sprintf("metadata.namespace: Invalid value: %q: does not match the namespace of the request", e.Namespace))
	}
	if e.InvolvedObject.Namespace == "" && ns != metav1.NamespaceDefault {
		invalid = append(invalid, "involvedObject.namespace: Invalid value: \"\": does not match event.namespace")
	}
	if errs := validation.IsDNS1123Subdomain(e.Name); len(errs) > 0 {
		invalid = append(invalid, fmt.Sprintf("metadata.name: Invalid value: %q: %s", e.Name, errs[0]))
	}
	if len(e.Message) > 1024 {
		invalid = append(invalid, "message: Invalid value: \"\": can have at most 1024 characters")
	}
	if e.Type != corev1.EventTypeNormal && e.Type != corev1.EventTypeWarning {
		invalid = append(invalid, fmt.Sprintf("type: Invalid value: %q", e.Type))
	}
	if len(invalid) > 0 {
		status(w, http.StatusUnprocessableEntity, "Invalid", fmt.Sprintf("Event %q is invalid: %s", e.Name, strings.Join(invalid, ", ")))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.created, func(o corev1.Event) bool { return o.Namespace == ns && o.Name == e.Name }) {
		status(w, http.StatusConflict, "AlreadyExists", fmt.Sprintf("events %q already exists", e.Name))
		return
	}
	e.Namespace, e.CreationTimestamp = ns, metav1.Now()
	s.created = append(s.created, e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(e)
}

// podPath splits /api/v1/namespaces/<ns>/pods/<name>[/<subresource>].
func podPath(path string) (ns, name, sub string, ok bool) {
	rest, ok := strings.CutPrefix(path, "/api/v1/namespaces/")
	if !ok {
		return "", "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 3 || len(parts) > 4 || parts[1] != "pods" || parts[0] == "" || parts[2] == "" {
		return "", "", "", false
	}
	if len(parts) == 4 {
		sub = parts[3]
	}
	return parts[0], parts[2], sub, true
}

// servePod answers a pod GET; a node may read the pods bound to it (the
// Node authorizer answers 403 for others, whether they exist or not).
func (s *Server) servePod(w http.ResponseWriter, u user, ns, name string) {
	s.mu.Lock()
	p, ok := s.pods[ns+"/"+name]
	s.mu.Unlock()
	if !master(u) && (!ok || !authorized(u, p.Spec.NodeName)) {
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

// servePods lists or watches the pods of a field selector
// spec.nodeName=<node>. A kubelet may list and watch only its own Node's
// pods, and only by that selector; a master any.
func (s *Server) servePods(w http.ResponseWriter, r *http.Request, u user) {
	q := r.URL.Query()
	node, ok := strings.CutPrefix(q.Get("fieldSelector"), "spec.nodeName=")
	if !ok && !master(u) || ok && !authorized(u, node) {
		status(w, http.StatusForbidden, "Forbidden", fmt.Sprintf(
			"pods is forbidden: User %q cannot list resource \"pods\" in API group \"\" at the cluster scope: can only list/watch pods with spec.nodeName field selector", u.name))
		return
	}
	if q.Get("watch") != "true" {
		s.listPods(w, r, node, ok)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	from, err := strconv.ParseInt(q.Get("resourceVersion"), 10, 64)
	if err != nil {
		status(w, http.StatusBadRequest, "BadRequest", "resourceVersion: "+err.Error())
		return
	}
	timeout := 10 * time.Minute
	if secs, err := strconv.Atoi(q.Get("timeoutSeconds")); err == nil {
		timeout = time.Duration(secs) * time.Second
	}
	end := time.After(timeout)
	enc := json.NewEncoder(w)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	flush()
	for {
		s.mu.Lock()
		if from < s.compacted {
			s.mu.Unlock()
			_ = enc.Encode(metav1.WatchEvent{Type: "ERROR", Object: runtimeStatus(http.StatusGone, "Expired",
				fmt.Sprintf("too old resource version: %d (%d)", from, s.compacted))})
			return
		}
		var send []podEvent
		for _, ev := range s.events {
			if ev.rv > from && (!ok || ev.pod.Spec.NodeName == node) && s.stalled == nil {
				send = append(send, ev)
			}
		}
		changed, ended := s.changed, r.Context().Value(endWatchesKey{}).(chan struct{})
		s.mu.Unlock()
		for _, ev := range send {
			// As the API server's, a watch event's object has its kind.
			p := ev.pod.DeepCopy()
			p.Kind, p.APIVersion = "Pod", "v1"
			b, _ := json.Marshal(p)
			if err := enc.Encode(metav1.WatchEvent{Type: ev.typ, Object: runtime.RawExtension{Raw: b}}); err != nil {
				return
			}
			from = ev.rv
		}
		flush()
		select {
		case <-changed:
		case <-end:
			return
		case <-ended:
			return
		case <-r.Context().Done():
			return
		}
	}
}

func runtimeStatus(code int, reason, msg string) runtime.RawExtension {
	b, _ := json.Marshal(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusFailure, Message: msg, Reason: metav1.StatusReason(reason), Code: int32(code)})
	return runtime.RawExtension{Raw: b}
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
	if master(u) {
		return true
	}
	return slices.Contains(u.groups, "system:nodes") && u.name == "system:node:"+node
}

func master(u user) bool { return slices.Contains(u.groups, "system:masters") }

func nodeAuthorizerReason(u user, node string) string {
	if self, ok := strings.CutPrefix(u.name, "system:node:"); ok {
		return fmt.Sprintf(": node '%s' cannot read '%s', only its own Node object", self, node)
	}
	return ""
}

func status(w http.ResponseWriter, code int, reason, msg string) {
	st := metav1.StatusFailure
	if code < 300 {
		st = metav1.StatusSuccess
	}
	writeStatus(w, metav1.Status{Status: st, Message: msg, Reason: metav1.StatusReason(reason), Code: int32(code)})
}

func writeStatus(w http.ResponseWriter, st metav1.Status) {
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(st)
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
