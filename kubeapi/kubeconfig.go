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

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/clientcmd/api/latest"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"sigs.k8s.io/yaml"
)

// Target is a kubeconfig's current context resolved, before any file it
// names is read: client-go's own form of the kubeconfig cut to that
// context, its paths absolute (relative ones are taken relative to the
// kubeconfig's directory, kubectl's rule).
type Target struct {
	File    string // the kubeconfig
	Context string
	Cluster string
	User    string // "" when the context names no user: anonymous
	Server  *url.URL
	// Kubeconfig holds the current context, its cluster and its user
	// only, as client-go's clientcmd reads them.
	Kubeconfig *clientcmdapi.Config
	// CredField is the kubeconfig key of the user's exec plugin or auth
	// provider, "" without: they run as this host (see Load).
	CredField string
}

// cluster and user are the current context's entries.
func (t *Target) cluster() *clientcmdapi.Cluster { return t.Kubeconfig.Clusters[t.Cluster] }
func (t *Target) user() *clientcmdapi.AuthInfo   { return t.Kubeconfig.AuthInfos[t.User] }

// Parse decodes a kubeconfig and resolves its current context. It does no
// I/O: file is the kubeconfig's path, used for relative paths and errors.
// The schema is client-go's (clientcmd/api/v1), decoded strictly: a
// misspelt key is an error naming it instead of a silently anonymous
// request.
func Parse(data []byte, file string) (*Target, error) {
	kc, err := decode(data)
	if err != nil {
		return nil, &KubeconfigError{File: file, Err: err}
	}
	t, err := current(kc, file)
	if err != nil {
		return nil, err
	}
	if err := t.checkCluster(); err != nil {
		return nil, err
	}
	if t.User == "" {
		return t, nil
	}
	return t, t.checkUser()
}

// current picks the current context, its cluster and its user out of kc
// and converts them to client-go's form.
func current(kc *clientcmdv1.Config, file string) (*Target, error) {
	fail := func(field string, format string, a ...any) error {
		return &KubeconfigError{File: file, Field: field, Err: fmt.Errorf(format, a...)}
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
	ctxs, err := byName(kc.Contexts, func(c clientcmdv1.NamedContext) string { return c.Name })
	if err != nil {
		return nil, &KubeconfigError{File: file, Field: "contexts", Err: err}
	}
	clusters, err := byName(kc.Clusters, func(c clientcmdv1.NamedCluster) string { return c.Name })
	if err != nil {
		return nil, &KubeconfigError{File: file, Field: "clusters", Err: err}
	}
	users, err := byName(kc.AuthInfos, func(u clientcmdv1.NamedAuthInfo) string { return u.Name })
	if err != nil {
		return nil, &KubeconfigError{File: file, Field: "users", Err: err}
	}
	c, ok := ctxs[kc.CurrentContext]
	if !ok {
		return nil, fail("current-context", "context %q is not in contexts", kc.CurrentContext)
	}
	cf := fmt.Sprintf("contexts[%q].context", c.Name)
	cut := &clientcmdv1.Config{CurrentContext: c.Name, Contexts: []clientcmdv1.NamedContext{c}}
	if c.Context.Cluster == "" {
		return nil, fail(cf+".cluster", "not set")
	}
	cl, ok := clusters[c.Context.Cluster]
	if !ok {
		return nil, fail(cf+".cluster", "cluster %q is not in clusters", c.Context.Cluster)
	}
	cut.Clusters = []clientcmdv1.NamedCluster{cl}
	if c.Context.AuthInfo != "" {
		u, ok := users[c.Context.AuthInfo]
		if !ok {
			return nil, fail(cf+".user", "user %q is not in users", c.Context.AuthInfo)
		}
		cut.AuthInfos = []clientcmdv1.NamedAuthInfo{u}
	}
	api, err := convert(cut, filepath.Dir(file))
	if err != nil {
		return nil, &KubeconfigError{File: file, Err: err}
	}
	return &Target{File: file, Context: c.Name, Cluster: cl.Name, User: c.Context.AuthInfo, Kubeconfig: api}, nil
}

// convert turns the v1 kubeconfig into client-go's internal form with
// client-go's defaults, and makes the paths it names absolute against dir
// (clientcmd's list of path fields, kubectl's rule).
func convert(v *clientcmdv1.Config, dir string) (*clientcmdapi.Config, error) {
	latest.Scheme.Default(v)
	out := clientcmdapi.NewConfig()
	if err := latest.Scheme.Convert(v, out, nil); err != nil {
		return nil, err
	}
	for _, c := range out.Clusters {
		if err := clientcmd.ResolvePaths(clientcmd.GetClusterFileReferences(c), dir); err != nil {
			return nil, err
		}
	}
	for _, u := range out.AuthInfos {
		if err := clientcmd.ResolvePaths(clientcmd.GetAuthInfoFileReferences(u), dir); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkCluster keeps what numa-partition refuses of a cluster entry
// beyond what client-go refuses.
func (t *Target) checkCluster() error {
	f := fmt.Sprintf("clusters[%q].cluster", t.Cluster)
	c := t.cluster()
	fail := func(field string, format string, a ...any) error {
		return &KubeconfigError{File: t.File, Field: f + "." + field, Err: fmt.Errorf(format, a...)}
	}
	if c.Server == "" {
		return fail("server", "not set")
	}
	u, err := url.Parse(c.Server)
	if err != nil {
		return fail("server", "%v", err)
	}
	// Credentials go in every request: never over plain HTTP (client-go
	// would send such a request anonymous, without saying so).
	if u.Scheme != "https" || u.Host == "" {
		return fail("server", "%q: want https://host[:port]", c.Server)
	}
	t.Server = u
	return bothSet(t.File, f+".certificate-authority", c.CertificateAuthority, c.CertificateAuthorityData != nil)
}

// checkUser keeps what numa-partition refuses of a user entry beyond what
// client-go refuses: a credential half given, or given twice, would
// quietly be another one (or none).
func (t *Target) checkUser() error {
	f := fmt.Sprintf("users[%q].user", t.User)
	u := t.user()
	fail := func(field string, format string, a ...any) error {
		return &KubeconfigError{File: t.File, Field: f + "." + field, Err: fmt.Errorf(format, a...)}
	}
	if err := bothSet(t.File, f+".client-certificate", u.ClientCertificate, u.ClientCertificateData != nil); err != nil {
		return err
	}
	if err := bothSet(t.File, f+".client-key", u.ClientKey, u.ClientKeyData != nil); err != nil {
		return err
	}
	cert, key := u.ClientCertificate != "" || u.ClientCertificateData != nil, u.ClientKey != "" || u.ClientKeyData != nil
	switch {
	case cert && !key:
		return fail("client-key", "not set, but client-certificate is (they may name the same file)")
	case key && !cert:
		return fail("client-certificate", "not set, but client-key is")
	}
	// Both would be ambiguous for the same reason as path and -data.
	if u.Token != "" && u.TokenFile != "" {
		return fail("tokenFile", "both token and tokenFile are set: keep one")
	}
	return t.checkPlugin(f, cert || u.Token != "" || u.TokenFile != "" || u.Username != "")
}

// checkPlugin checks the user's exec plugin or auth provider. One beside
// another credential is refused: client-go's exec authenticator steps
// aside for a token or a certificate, and which one a request then
// carries is not obvious. One credential a user.
func (t *Target) checkPlugin(f string, otherCredential bool) error {
	u := t.user()
	switch {
	case u.AuthProvider != nil:
		t.CredField = f + ".auth-provider"
		// Its CA file is read like the others (Target.Config).
		const ca = "idp-certificate-authority"
		if err := bothSet(t.File, t.CredField+".config."+ca, u.AuthProvider.Config[ca], u.AuthProvider.Config[ca+"-data"] != ""); err != nil {
			return err
		}
	case u.Exec != nil:
		t.CredField = f + ".exec"
		if err := checkExec(u.Exec); err != nil {
			return &KubeconfigError{File: t.File, Field: t.CredField, Err: err}
		}
	default:
		return nil
	}
	if otherCredential || u.Exec != nil && u.AuthProvider != nil {
		return &KubeconfigError{File: t.File, Field: t.CredField, Err: errors.New("set beside another credential (a token, a client certificate, basic auth, exec or auth-provider): keep one")}
	}
	return nil
}

// checkExec refuses an exec plugin numa-partition cannot run, and tells
// client-go it has no terminal to lend: numa-partition runs unattended
// (systemd, or a root shell on a production host), so a plugin must not
// wait for an answer on its standard input.
func checkExec(e *clientcmdapi.ExecConfig) error {
	switch {
	case e.Command == "":
		return errors.New("command: not set")
	case e.APIVersion == "":
		return errors.New("apiVersion: not set")
	case e.InteractiveMode == clientcmdapi.AlwaysExecInteractiveMode:
		return errors.New("interactiveMode Always: numa-partition runs the plugin without a terminal; use a plugin mode that needs none (Never or IfAvailable)")
	case e.InteractiveMode == "":
		// kubectl's default for the versions that allow it unset.
		e.InteractiveMode = clientcmdapi.IfAvailableExecInteractiveMode
	}
	e.StdinUnavailable = true
	e.StdinUnavailableMessage = "numa-partition runs credential plugins without a terminal"
	return nil
}

// bothSet refuses a path-and-data pair (client-key and client-key-data,
// …) with both set, as kubectl's validation refuses it ("… are both
// specified"): which one wins is not obvious, and a stale one hides.
func bothSet(file, field, path string, data bool) error {
	if path != "" && data {
		return &KubeconfigError{File: file, Field: field, Err: fmt.Errorf("both %s and %s-data are set: keep one", lastKey(field), lastKey(field))}
	}
	return nil
}

func lastKey(field string) string {
	return field[strings.LastIndexByte(field, '.')+1:]
}

// decode is strict: duplicate keys (YAMLToJSONStrict) and unknown fields
// are errors.
func decode(data []byte) (*clientcmdv1.Config, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("not a kubeconfig: %w", err)
	}
	var kc clientcmdv1.Config
	d := json.NewDecoder(bytes.NewReader(j))
	d.DisallowUnknownFields()
	if err := d.Decode(&kc); err != nil {
		var b64 base64.CorruptInputError
		if errors.As(err, &b64) {
			// encoding/json does not say which -data field it was.
			return nil, fmt.Errorf("not a kubeconfig: a -data field is not base64: %w", err)
		}
		// "json: unknown field" would be misleading in a YAML file.
		return nil, fmt.Errorf("not a kubeconfig: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return &kc, nil
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
