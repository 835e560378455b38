package kubeapi

import (
	"context"
	"errors"
)

// Version GETs /version (any identity may: system:public-info-viewer)
// and returns the API server's gitVersion: an answer proves the server
// reachable and its certificate trusted by the kubeconfig's CA. Errors
// as Node's.
func (c *Client) Version(ctx context.Context) (string, error) {
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if _, err := c.get(ctx, "Version", &v, "version"); err != nil {
		return "", err
	}
	if v.GitVersion == "" {
		return "", errors.New("GET /version: no gitVersion in the answer")
	}
	return v.GitVersion, nil
}
