package kubeapi

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"k8s.io/client-go/pkg/apis/clientauthentication"
	"k8s.io/client-go/plugin/pkg/client/auth/exec"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/client-go/transport"
)

// Exec credential plugins (users[].user.exec), as kubectl runs them: the
// kubeconfigs of managed and SSO-fronted clusters (aws eks get-token,
// gke-gcloud-auth-plugin, kubelogin) have no other credential. client-go's
// exec authenticator runs the plugin, caches the credential it prints
// until it expires, runs it again on a 401, and serves a client
// certificate through the TLS handshake when the plugin gives one; it is
// the code kubectl itself runs, so its behaviour (the ExecCredential
// protocol's versions, KUBERNETES_EXEC_INFO, provideClusterInfo) is
// kubectl's. numa-partition has no terminal to lend it: a plugin that
// must ask the user (interactiveMode: Always) is refused.

// execPluginAPIVersions are the ExecCredential versions client-go speaks.
var execPluginAPIVersions = []string{"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"}

// parseExec decodes a user's exec entry strictly (a misspelt key is an
// error naming it) into client-go's form.
func parseExec(raw json.RawMessage) (*clientcmdapi.ExecConfig, error) {
	var v clientcmdv1.ExecConfig
	if err := decodeStrict(raw, &v); err != nil {
		return nil, fmt.Errorf("not an exec entry: %w", err)
	}
	switch {
	case v.Command == "":
		return nil, fmt.Errorf("command: not set")
	case !slices.Contains(execPluginAPIVersions, v.APIVersion):
		return nil, fmt.Errorf("apiVersion %q: want one of %v", v.APIVersion, execPluginAPIVersions)
	case v.InteractiveMode == clientcmdv1.AlwaysExecInteractiveMode:
		return nil, fmt.Errorf("interactiveMode Always: numa-partition runs the plugin without a terminal; use a plugin mode that needs none (Never or IfAvailable)")
	}
	mode := clientcmdapi.ExecInteractiveMode(v.InteractiveMode)
	if mode == "" {
		// kubectl's default for the versions that allow it unset.
		mode = clientcmdapi.IfAvailableExecInteractiveMode
	}
	c := &clientcmdapi.ExecConfig{Command: v.Command, Args: v.Args, APIVersion: v.APIVersion, InstallHint: v.InstallHint,
		ProvideClusterInfo: v.ProvideClusterInfo, InteractiveMode: mode,
		StdinUnavailable: true, StdinUnavailableMessage: "numa-partition runs credential plugins without a terminal"}
	for _, e := range v.Env {
		c.Env = append(c.Env, clientcmdapi.ExecEnvVar{Name: e.Name, Value: e.Value})
	}
	return c, nil
}

// execTransport wraps tr (and its dialer) with cfg's exec plugin: the
// credential on every request, the plugin run again on a 401, connections
// closed when the plugin's client certificate changes.
func execTransport(cfg *Config, tr *http.Transport) (http.RoundTripper, error) {
	cluster := &clientauthentication.Cluster{Server: cfg.Server.String(), TLSServerName: cfg.tls.ServerName, CertificateAuthorityData: cfg.caPEM}
	a, err := exec.GetAuthenticator(cfg.exec, cluster)
	if err != nil {
		return nil, &KubeconfigError{File: cfg.File, Field: cfg.credField, Err: err}
	}
	tc := &transport.Config{DialHolder: &transport.DialHolder{Dial: tr.DialContext}}
	if err := a.UpdateTransportConfig(tc); err != nil {
		return nil, &KubeconfigError{File: cfg.File, Field: cfg.credField, Err: err}
	}
	tr.DialContext = tc.DialHolder.Dial
	if h := tc.TLS.GetCertHolder; h != nil {
		tr.TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, err := h.GetCert()
			if cert == nil && err == nil {
				// A plugin that gives a token has no certificate: send
				// none (crypto/tls wants an empty one, not nil).
				cert = &tls.Certificate{}
			}
			return cert, err
		}
	}
	return tc.WrapTransport(tr), nil
}
