package kubeapi

import (
	"context"
	"errors"
	"net/http"

	"k8s.io/client-go/discovery"
)

// Version GETs /version (any identity may: system:public-info-viewer)
// and returns the API server's gitVersion: an answer proves the server
// reachable and its certificate trusted by the kubeconfig's CA. Errors
// as Node's.
func (c *Client) Version(ctx context.Context) (string, error) {
	cs, err := c.typed()
	if err != nil {
		return "", err
	}
	v, err := discovery.ToServerVersionInterfaceWithContext(cs.Discovery()).ServerVersionWithContext(ctx)
	if err != nil {
		return "", c.apiErr(err, http.MethodGet, nil, "version")
	}
	if v.GitVersion == "" {
		return "", errors.New("GET /version: no gitVersion in the answer")
	}
	return v.GitVersion, nil
}
