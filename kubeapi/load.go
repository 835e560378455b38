package kubeapi

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"

	// Auth providers register themselves with client-go's rest package,
	// the one way to reach them: oidc is the one client-go still has; gcp
	// and azure refuse, with client-go's message naming the exec plugin
	// that replaced them.
	_ "k8s.io/client-go/plugin/pkg/client/auth/azure"
	_ "k8s.io/client-go/plugin/pkg/client/auth/gcp"
	_ "k8s.io/client-go/plugin/pkg/client/auth/oidc"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/transport"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// Config is a kubeconfig made usable: client-go's rest.Config for it,
// every file it names already read and inlined.
type Config struct {
	File    string // the kubeconfig
	Context string
	User    string // the kubeconfig's user entry, "" for anonymous
	Server  *url.URL
	// rest names no file (client-go never opens one: Load read them
	// within the root) and has no dialer or timeouts (NewClient's).
	rest      *rest.Config
	endpoint  string
	credField string // the exec or auth-provider key, "" without
}

// Endpoint names the server c dials and how it reaches and trusts it:
// the URL, the TLS server name, the CA bundle's digest (or "insecure")
// and the proxy. Two kubeconfigs with the same endpoint reach the same
// server the same way, whoever they log in as: asking it once answers for
// both.
func (c *Config) Endpoint() string { return c.endpoint }

// Load reads the kubeconfig at path and the files it names. root is the
// filesystem they are on: "/" (or "") for this machine, or another
// host's root (status --root), below which path and every absolute path
// in the kubeconfig are read, as that host's kubelet sees them.
//
// What kubectl accepts is accepted (proxy-url, tls-server-name,
// impersonation, basic auth, exec plugins, the oidc auth provider),
// through client-go's own code; insecure-skip-tls-verify too, the
// operator's choice, as kubectl honours it. Under another host's root an
// exec plugin or auth provider is refused: it would run as this host.
//
// Errors are *KubeconfigError naming the file and the field; a missing
// kubeconfig is one with Field "" that errors.Is(err, fs.ErrNotExist).
func Load(root, path string) (*Config, error) {
	local := root == "" || filepath.Clean(root) == "/"
	read := func(p string) ([]byte, error) {
		if local {
			return fsutil.ReadFileBounded(p, maxKubeconfigFile)
		}
		// Another host's root: its links (kubelet-client-current.pem is
		// one) are followed inside it, never onto this host.
		return fsutil.NewRoot(root).ReadFileFollow(p, maxKubeconfigFile)
	}
	b, err := read(path)
	if err != nil {
		return nil, &KubeconfigError{File: path, Err: err}
	}
	t, err := Parse(b, path)
	if err != nil {
		return nil, err
	}
	if t.CredField != "" && !local {
		// An exec plugin is a command of this host, an auth provider
		// reads files and reaches an issuer as this host.
		return nil, &KubeconfigError{File: path, Field: t.CredField, Err: fmt.Errorf("runs as this host, not as the root %s: give a kubeconfig with a certificate or a token", root)}
	}
	return t.Config(read)
}

// Config reads what t names through read, inlines it, and has client-go
// build the rest.Config (clientcmd, as kubectl does). Certificate and key
// may be one PEM file, as kubelet's kubelet-client-current.pem is.
func (t *Target) Config(read func(path string) ([]byte, error)) (*Config, error) {
	kc := t.Kubeconfig.DeepCopy()
	for _, s := range t.sources(kc) {
		if err := s.inline(t.File, read); err != nil {
			return nil, err
		}
	}
	if err := t.checkKeyPair(kc); err != nil {
		return nil, err
	}
	rc, err := clientcmd.NewNonInteractiveClientConfig(*kc, t.Context, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, &KubeconfigError{File: t.File, Field: fmt.Sprintf("contexts[%q]", t.Context), Err: err}
	}
	if err := t.checkTransport(rc); err != nil {
		return nil, err
	}
	return &Config{File: t.File, Context: t.Context, User: t.User, Server: t.Server, rest: rc,
		endpoint: endpoint(rc, kc.Clusters[t.Cluster].ProxyURL), credField: t.CredField}, nil
}

// checkTransport has client-go set up the credentials and TLS now, so
// that what it refuses (an auth provider it no longer has, an exec
// plugin's unknown apiVersion, a CA beside insecure-skip-tls-verify) is
// a Load error naming the field rather than every request's.
func (t *Target) checkTransport(rc *rest.Config) error {
	tc, err := rc.TransportConfig()
	if err != nil {
		field := t.CredField
		if field == "" {
			field = fmt.Sprintf("users[%q].user", t.User)
		}
		return &KubeconfigError{File: t.File, Field: field, Err: err}
	}
	if _, err := transport.TLSConfigFor(tc); err != nil {
		return &KubeconfigError{File: t.File, Field: fmt.Sprintf("clusters[%q].cluster", t.Cluster), Err: err}
	}
	return nil
}

// endpoint is Config.Endpoint's.
func endpoint(rc *rest.Config, proxy string) string {
	trust := "insecure"
	if !rc.Insecure {
		trust = ""
		if rc.CAData != nil {
			trust = fmt.Sprintf("%x", sha256.Sum256(rc.CAData))
		}
	}
	e := rc.Host + " " + rc.ServerName + " " + trust
	if proxy != "" {
		e += " via " + proxy
	}
	return e
}

// source is one credential a kubeconfig gives as a file (path, key
// field) or inline (data, key dataField).
type source struct {
	field, dataField string
	path             *string
	data             []byte
	// set puts the bytes where client-go takes them inline; check, when
	// set, refuses bytes that cannot be what the field says.
	set   func([]byte)
	check func([]byte) error
}

// inline reads s's file, if it names one, checks the bytes and puts them
// inline, clearing the path: client-go must not open it itself, outside
// the root and unbounded.
func (s source) inline(file string, read func(string) ([]byte, error)) error {
	field := s.dataField
	if *s.path != "" {
		b, err := read(*s.path)
		if err != nil {
			return &KubeconfigError{File: file, Field: s.field, Err: err}
		}
		field, s.data, *s.path = s.field, b, ""
	}
	if s.data == nil {
		return nil
	}
	if s.check != nil {
		if err := s.check(s.data); err != nil {
			return &KubeconfigError{File: file, Field: field, Err: err}
		}
	}
	s.set(s.data)
	return nil
}

// sources lists the files kc's cluster and user may name: clientcmd's
// (the CA, the client certificate and key, the token file) and the oidc
// auth provider's CA.
func (t *Target) sources(kc *clientcmdapi.Config) []source {
	cf := fmt.Sprintf("clusters[%q].cluster", t.Cluster)
	c := kc.Clusters[t.Cluster]
	ss := []source{{field: cf + ".certificate-authority", dataField: cf + ".certificate-authority-data",
		path: &c.CertificateAuthority, data: c.CertificateAuthorityData,
		set: func(b []byte) { c.CertificateAuthorityData = b }, check: checkCA}}
	u, ok := kc.AuthInfos[t.User]
	if !ok {
		return ss
	}
	uf := fmt.Sprintf("users[%q].user", t.User)
	var token []byte
	if u.Token != "" {
		token = []byte(u.Token)
	}
	ss = append(ss,
		source{field: uf + ".client-certificate", dataField: uf + ".client-certificate-data", path: &u.ClientCertificate,
			data: u.ClientCertificateData, set: func(b []byte) { u.ClientCertificateData = b }},
		source{field: uf + ".client-key", dataField: uf + ".client-key-data", path: &u.ClientKey,
			data: u.ClientKeyData, set: func(b []byte) { u.ClientKeyData = b }},
		source{field: uf + ".tokenFile", dataField: uf + ".token", path: &u.TokenFile, data: token,
			set: func(b []byte) { u.Token = string(bytes.TrimSpace(b)) }, check: checkToken})
	if s, ok := t.oidcCA(uf, u); ok {
		ss = append(ss, s)
	}
	return ss
}

// oidcCA is the oidc auth provider's idp-certificate-authority file, which
// client-go would otherwise open itself; a relative path is taken
// relative to the kubeconfig, like the others.
func (t *Target) oidcCA(uf string, u *clientcmdapi.AuthInfo) (source, bool) {
	const key = "idp-certificate-authority"
	if u.AuthProvider == nil || u.AuthProvider.Config[key] == "" {
		return source{}, false
	}
	cfg := u.AuthProvider.Config
	path := cfg[key]
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(t.File), path)
	}
	return source{field: uf + ".auth-provider.config." + key, path: &path, check: checkCA,
		set: func(b []byte) {
			delete(cfg, key)
			cfg[key+"-data"] = base64.StdEncoding.EncodeToString(b)
		}}, true
}

func checkCA(b []byte) error {
	if !x509.NewCertPool().AppendCertsFromPEM(b) {
		return errors.New("no PEM certificate in it")
	}
	return nil
}

func checkToken(b []byte) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return errors.New("empty token")
	}
	return nil
}

// checkKeyPair refuses a client certificate that its key does not match
// now, naming the field, rather than at the first TLS handshake.
func (t *Target) checkKeyPair(kc *clientcmdapi.Config) error {
	u, ok := kc.AuthInfos[t.User]
	if !ok || u.ClientCertificateData == nil {
		return nil
	}
	if _, err := tls.X509KeyPair(u.ClientCertificateData, u.ClientKeyData); err != nil {
		field, key := fmt.Sprintf("users[%q].user.client-certificate", t.User), "client-key"
		if t.user().ClientCertificate == "" {
			field += "-data"
		}
		if t.user().ClientKey == "" {
			key += "-data"
		}
		return &KubeconfigError{File: t.File, Field: field, Err: fmt.Errorf("with %s: %w", key, err)}
	}
	return nil
}

// maxKubeconfigFile bounds a kubeconfig and each file it names (CA,
// client certificate and key, token): a few KiB each; a kubeconfig
// embedding a long CA bundle stays far below it.
const maxKubeconfigFile = 4 << 20
