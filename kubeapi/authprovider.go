package kubeapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	// The oidc auth provider registers itself with client-go's rest
	// package, the one way to reach it.
	_ "k8s.io/client-go/plugin/pkg/client/auth/oidc"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
)

// The oidc auth provider (users[].user.auth-provider with name oidc), as
// kubectl still runs it: the kubeconfig's id-token as the bearer token
// while it is valid, refreshed with its refresh-token from the issuer
// (idp-issuer-url) when it is not. The refreshed tokens are not written
// back into the kubeconfig (kubectl does): numa-partition never writes an
// operator's kubeconfig, so each run refreshes again. The gcp and azure
// providers left client-go for their exec plugins: they are refused,
// saying so.

// parseAuthProvider decodes a user's auth-provider entry strictly.
func parseAuthProvider(raw json.RawMessage) (*clientcmdapi.AuthProviderConfig, error) {
	var v clientcmdv1.AuthProviderConfig
	if err := decodeStrict(raw, &v); err != nil {
		return nil, fmt.Errorf("not an auth-provider entry: %w", err)
	}
	if v.Name != "oidc" {
		return nil, fmt.Errorf("name %q: only oidc is supported (gcp and azure left kubectl for their exec credential plugins: gke-gcloud-auth-plugin, kubelogin)", v.Name)
	}
	return &clientcmdapi.AuthProviderConfig{Name: v.Name, Config: v.Config}, nil
}

// authProviderTransport wraps tr with cfg's auth provider.
func authProviderTransport(cfg *Config, tr http.RoundTripper) (http.RoundTripper, error) {
	p, err := rest.GetAuthProvider(cfg.Server.String(), cfg.authProvider, nil)
	if err != nil {
		return nil, &KubeconfigError{File: cfg.File, Field: cfg.credField, Err: err}
	}
	return p.WrapTransport(tr), nil
}
