package kubeapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// The kubeconfig schema (clientcmd/api/v1), every field of it: decoding is
// strict, so a misspelt key is an error naming it instead of a silently
// anonymous request. Fields this package does not implement are decoded
// only to be refused (see check).
type kubeconfig struct {
	Kind           string          `json:"kind,omitempty"`
	APIVersion     string          `json:"apiVersion,omitempty"`
	Preferences    json.RawMessage `json:"preferences,omitempty"`
	Clusters       []namedCluster  `json:"clusters"`
	Users          []namedUser     `json:"users"`
	Contexts       []namedContext  `json:"contexts"`
	CurrentContext string          `json:"current-context"`
	Extensions     json.RawMessage `json:"extensions,omitempty"`
}

type namedCluster struct {
	Name    string  `json:"name"`
	Cluster cluster `json:"cluster"`
}

type cluster struct {
	Server                   string          `json:"server"`
	TLSServerName            string          `json:"tls-server-name,omitempty"`
	InsecureSkipTLSVerify    bool            `json:"insecure-skip-tls-verify,omitempty"`
	CertificateAuthority     string          `json:"certificate-authority,omitempty"`
	CertificateAuthorityData string          `json:"certificate-authority-data,omitempty"`
	ProxyURL                 string          `json:"proxy-url,omitempty"`
	DisableCompression       bool            `json:"disable-compression,omitempty"`
	Extensions               json.RawMessage `json:"extensions,omitempty"`
}

type namedUser struct {
	Name string `json:"name"`
	User user   `json:"user"`
}

type user struct {
	ClientCertificate     string          `json:"client-certificate,omitempty"`
	ClientCertificateData string          `json:"client-certificate-data,omitempty"`
	ClientKey             string          `json:"client-key,omitempty"`
	ClientKeyData         string          `json:"client-key-data,omitempty"`
	Token                 string          `json:"token,omitempty"`
	TokenFile             string          `json:"tokenFile,omitempty"`
	As                    string          `json:"as,omitempty"`
	AsUID                 string          `json:"as-uid,omitempty"`
	AsGroups              []string        `json:"as-groups,omitempty"`
	AsUserExtra           json.RawMessage `json:"as-user-extra,omitempty"`
	Username              string          `json:"username,omitempty"`
	Password              string          `json:"password,omitempty"`
	AuthProvider          json.RawMessage `json:"auth-provider,omitempty"`
	Exec                  json.RawMessage `json:"exec,omitempty"`
	Extensions            json.RawMessage `json:"extensions,omitempty"`
}

type namedContext struct {
	Name    string      `json:"name"`
	Context kubeContext `json:"context"`
}

type kubeContext struct {
	Cluster    string          `json:"cluster"`
	User       string          `json:"user,omitempty"`
	Namespace  string          `json:"namespace,omitempty"`
	Extensions json.RawMessage `json:"extensions,omitempty"`
}

// Target is a kubeconfig's current context resolved, before any file it
// names is read: the server, and where the CA, client certificate, key and
// token come from. Paths are absolute (relative ones are taken relative to
// the kubeconfig's directory, kubectl's rule).
type Target struct {
	File    string // the kubeconfig
	Context string
	Cluster string
	User    string // "" when the context names no user: anonymous
	Server  *url.URL
	// ServerName overrides the name the server's certificate is checked
	// against (tls-server-name).
	ServerName string
	CA         Source // unset: the system's roots
	Cert, Key  Source // both or neither
	Token      Source
	// Exec is the user's credential plugin (exec.go) and AuthProvider
	// its auth provider (authprovider.go), nil without; CredField is the
	// kubeconfig key of the one set.
	Exec         *clientcmdapi.ExecConfig
	AuthProvider *clientcmdapi.AuthProviderConfig
	CredField    string
}

// Source is one credential: inline Data, or a file at Path. Field is its
// kubeconfig key, for errors.
type Source struct {
	Field string
	Path  string
	Data  []byte
}

// Set says whether the kubeconfig gives this source at all.
func (s Source) Set() bool { return s.Path != "" || s.Data != nil }

// Parse decodes a kubeconfig and resolves its current context. It does no
// I/O: file is the kubeconfig's path, used for relative paths and errors.
func Parse(data []byte, file string) (*Target, error) {
	fail := func(field string, format string, a ...any) error {
		return &KubeconfigError{File: file, Field: field, Err: fmt.Errorf(format, a...)}
	}
	kc, err := decode(data)
	if err != nil {
		return nil, &KubeconfigError{File: file, Err: err}
	}
	if kc.Kind != "" && kc.Kind != "Config" {
		return nil, fail("kind", "%q, want Config", kc.Kind)
	}
	if kc.APIVersion != "" && kc.APIVersion != "v1" {
		return nil, fail("apiVersion", "%q, want v1", kc.APIVersion)
	}
	if kc.CurrentContext == "" {
		return nil, fail("current-context", "not set: the kubeconfig does not say which context to use")
	}
	ctxs, err := byName(kc.Contexts, func(c namedContext) string { return c.Name })
	if err != nil {
		return nil, &KubeconfigError{File: file, Field: "contexts", Err: err}
	}
	clusters, err := byName(kc.Clusters, func(c namedCluster) string { return c.Name })
	if err != nil {
		return nil, &KubeconfigError{File: file, Field: "clusters", Err: err}
	}
	users, err := byName(kc.Users, func(u namedUser) string { return u.Name })
	if err != nil {
		return nil, &KubeconfigError{File: file, Field: "users", Err: err}
	}
	c, ok := ctxs[kc.CurrentContext]
	if !ok {
		return nil, fail("current-context", "context %q is not in contexts", kc.CurrentContext)
	}
	cf := fmt.Sprintf("contexts[%q].context", c.Name)
	if c.Context.Cluster == "" {
		return nil, fail(cf+".cluster", "not set")
	}
	cl, ok := clusters[c.Context.Cluster]
	if !ok {
		return nil, fail(cf+".cluster", "cluster %q is not in clusters", c.Context.Cluster)
	}
	t := &Target{File: file, Context: c.Name, Cluster: cl.Name}
	if err := t.setCluster(cl); err != nil {
		return nil, err
	}
	if c.Context.User != "" {
		u, ok := users[c.Context.User]
		if !ok {
			return nil, fail(cf+".user", "user %q is not in users", c.Context.User)
		}
		t.User = u.Name
		if err := t.setUser(u); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (t *Target) setCluster(nc namedCluster) error {
	f := fmt.Sprintf("clusters[%q].cluster", nc.Name)
	c := nc.Cluster
	fail := func(field string, format string, a ...any) error {
		return &KubeconfigError{File: t.File, Field: f + "." + field, Err: fmt.Errorf(format, a...)}
	}
	// Refused rather than honoured: status would send a token to, or
	// prove a kubelet's key to, whatever answers; kubeadm's kubeconfigs
	// and those kubelet's TLS bootstrap writes carry the cluster's CA; and
	// skipping verification would hide a failure worth reporting (a wrong
	// CA or server).
	if c.InsecureSkipTLSVerify {
		return fail("insecure-skip-tls-verify", "refused: numa-partition always verifies the API server's certificate; give certificate-authority or certificate-authority-data")
	}
	// A proxy would need its own settings and credentials; status talks to
	// the API server directly (it does not read HTTPS_PROXY either: the
	// kubelet's environment is not status's).
	if c.ProxyURL != "" {
		return fail("proxy-url", "not supported by numa-partition")
	}
	if c.Server == "" {
		return fail("server", "not set")
	}
	u, err := url.Parse(c.Server)
	if err != nil {
		return fail("server", "%v", err)
	}
	// Credentials go in every request: never over plain HTTP.
	if u.Scheme != "https" || u.Host == "" {
		return fail("server", "%q: want https://host[:port]", c.Server)
	}
	t.Server, t.ServerName = u, c.TLSServerName
	t.CA, err = t.source(f+".certificate-authority", c.CertificateAuthority, c.CertificateAuthorityData)
	return err
}

func (t *Target) setUser(nu namedUser) error {
	f := fmt.Sprintf("users[%q].user", nu.Name)
	u := nu.User
	fail := func(field string, format string, a ...any) error {
		return &KubeconfigError{File: t.File, Field: f + "." + field, Err: fmt.Errorf(format, a...)}
	}
	for _, x := range []struct {
		field string
		set   bool
	}{
		{"username", u.Username != ""}, {"password", u.Password != ""},
		{"as", u.As != ""}, {"as-uid", u.AsUID != ""}, {"as-groups", len(u.AsGroups) > 0}, {"as-user-extra", present(u.AsUserExtra)},
	} {
		if x.set {
			return fail(x.field, "not supported by numa-partition: use a client certificate, a token, an exec credential plugin or the oidc auth provider")
		}
	}
	var err error
	if t.Cert, err = t.source(f+".client-certificate", u.ClientCertificate, u.ClientCertificateData); err != nil {
		return err
	}
	if t.Key, err = t.source(f+".client-key", u.ClientKey, u.ClientKeyData); err != nil {
		return err
	}
	switch {
	case t.Cert.Set() && !t.Key.Set():
		return fail("client-key", "not set, but client-certificate is (they may name the same file)")
	case t.Key.Set() && !t.Cert.Set():
		return fail("client-certificate", "not set, but client-key is")
	}
	// Both would be ambiguous for the same reason as path and -data.
	if u.Token != "" && u.TokenFile != "" {
		return fail("tokenFile", "both token and tokenFile are set: keep one")
	}
	switch {
	case u.Token != "":
		t.Token = Source{Field: f + ".token", Data: []byte(u.Token)}
	case u.TokenFile != "":
		t.Token = Source{Field: f + ".tokenFile", Path: t.abs(u.TokenFile)}
	}
	// A plugin beside another credential: client-go's exec
	// authenticator steps aside for a token or a certificate, and which
	// one a request then carries is not obvious. One credential a user.
	plugins := 0
	if present(u.Exec) {
		plugins++
		if t.Exec, err = parseExec(u.Exec); err != nil {
			return fail("exec", "%v", err)
		}
		t.CredField = f + ".exec"
	}
	if present(u.AuthProvider) {
		plugins++
		if t.AuthProvider, err = parseAuthProvider(u.AuthProvider); err != nil {
			return fail("auth-provider", "%v", err)
		}
		t.CredField = f + ".auth-provider"
	}
	if plugins > 1 || plugins == 1 && (t.Token.Set() || t.Cert.Set()) {
		return &KubeconfigError{File: t.File, Field: t.CredField, Err: fmt.Errorf("set beside another credential (a token, a client certificate, exec or auth-provider): keep one")}
	}
	return nil
}

// source is a path-or-data pair (client-key and client-key-data, …).
// Both set is refused, as kubectl's validation refuses it ("… are both
// specified"): which one wins is not obvious, and a stale one hides.
func (t *Target) source(field, path, data string) (Source, error) {
	switch {
	case path != "" && data != "":
		return Source{}, &KubeconfigError{File: t.File, Field: field, Err: fmt.Errorf("both %s and %s-data are set: keep one", lastKey(field), lastKey(field))}
	case path != "":
		return Source{Field: field, Path: t.abs(path)}, nil
	case data != "":
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data))
		if err != nil {
			return Source{}, &KubeconfigError{File: t.File, Field: field + "-data", Err: fmt.Errorf("not base64: %w", err)}
		}
		return Source{Field: field + "-data", Data: b}, nil
	}
	return Source{}, nil
}

// abs makes a kubeconfig path absolute: relative to the kubeconfig's
// directory, as kubectl and kubelet resolve them.
func (t *Target) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(filepath.Dir(t.File), p)
}

func lastKey(field string) string {
	return field[strings.LastIndexByte(field, '.')+1:]
}

func present(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "null"
}

// decode is strict: duplicate keys (YAMLToJSONStrict) and unknown fields
// are errors.
func decode(data []byte) (*kubeconfig, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("not a kubeconfig: %w", err)
	}
	var kc kubeconfig
	if err := decodeStrict(j, &kc); err != nil {
		return nil, fmt.Errorf("not a kubeconfig: %w", err)
	}
	return &kc, nil
}

// decodeStrict decodes JSON (a kubeconfig made JSON, or one entry of it)
// into v, refusing a key v does not have.
func decodeStrict(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		// "json: unknown field" would be misleading in a YAML file.
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// byName indexes a kubeconfig list by name; a duplicate name is an error
// because kubectl and kubelet would each pick one of them.
func byName[T any](xs []T, name func(T) string) (map[string]T, error) {
	m := make(map[string]T, len(xs))
	for i, x := range xs {
		n := name(x)
		if n == "" {
			return nil, fmt.Errorf("entry %d has no name", i)
		}
		if _, dup := m[n]; dup {
			return nil, fmt.Errorf("%q appears twice", n)
		}
		m[n] = x
	}
	return m, nil
}
