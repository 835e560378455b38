package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

// The ConfigMap kubeadm keeps the cluster's KubeletConfiguration in, and
// its key: `kubeadm join` writes it as the worker's config.yaml (since
// Kubernetes 1.24 the name has no version suffix).
const (
	KubeletConfigNamespace = "kube-system"
	KubeletConfigMap       = "kubelet-config"
	kubeletConfigKey       = "kubelet"
)

// ClusterKubelet is what every kubelet of a kubeadm cluster shares that
// a worker takes from the cluster at join: where its pods find the
// cluster's DNS.
type ClusterKubelet struct {
	ClusterDNS    []string
	ClusterDomain string
	// Source names where it was read: the ConfigMap and the server.
	Source string
}

// ClusterKubelet reads kube-system/kubelet-config, as `kubeadm join`
// does (with the bootstrap token, which kubeadm's RBAC lets read it). Its
// errors say what the cluster lacks: ErrNotFound when the cluster keeps
// no such ConfigMap (not made by kubeadm), ErrForbidden when the
// credentials may not read it.
func (c *Client) ClusterKubelet(ctx context.Context) (ClusterKubelet, error) {
	cs, err := c.typed()
	if err != nil {
		return ClusterKubelet{}, err
	}
	path := []string{"api/v1/namespaces", KubeletConfigNamespace, "configmaps", KubeletConfigMap}
	cm, err := cs.CoreV1().ConfigMaps(KubeletConfigNamespace).Get(ctx, KubeletConfigMap, metav1.GetOptions{})
	if err != nil {
		return ClusterKubelet{}, c.apiErr(err, http.MethodGet, nil, path...)
	}
	u := c.cfg.Server.JoinPath(path...)
	where := fmt.Sprintf("%s/%s (%s)", KubeletConfigNamespace, KubeletConfigMap, u)
	data, ok := cm.Data[kubeletConfigKey]
	if !ok {
		return ClusterKubelet{}, fmt.Errorf("%s has no key %q: not the KubeletConfiguration kubeadm writes", where, kubeletConfigKey)
	}
	return parseClusterKubelet(where, []byte(data))
}

// parseClusterKubelet reads the two fields from a KubeletConfiguration
// document. Fields this build does not know (a newer kubelet's) are
// ignored: nothing else of it is taken.
func parseClusterKubelet(where string, doc []byte) (ClusterKubelet, error) {
	var kc kubeletv1beta1.KubeletConfiguration
	if err := yaml.Unmarshal(doc, &kc); err != nil {
		return ClusterKubelet{}, fmt.Errorf("%s: not a KubeletConfiguration: %w", where, err)
	}
	if kc.Kind != "" && kc.Kind != "KubeletConfiguration" {
		return ClusterKubelet{}, fmt.Errorf("%s: kind %q, not KubeletConfiguration", where, kc.Kind)
	}
	var errs []error
	for _, ip := range kc.ClusterDNS {
		if net.ParseIP(ip) == nil {
			errs = append(errs, fmt.Errorf("%s: clusterDNS %q is not an IP address", where, ip))
		}
	}
	if d := kc.ClusterDomain; d != "" {
		if msgs := validation.IsDNS1123Subdomain(d); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s: clusterDomain %q: %s", where, d, msgs[0]))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ClusterKubelet{}, err
	}
	return ClusterKubelet{ClusterDNS: kc.ClusterDNS, ClusterDomain: kc.ClusterDomain, Source: where}, nil
}
