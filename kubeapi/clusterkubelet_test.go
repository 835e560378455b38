package kubeapi_test

import (
	"context"
	"crypto/tls"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
)

// kubeadmKubeletConfig is the start of what kubeadm init stores in
// kube-system/kubelet-config (Kubernetes 1.37), with a field this build
// may not know.
const kubeadmKubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
authentication:
  anonymous:
    enabled: false
cgroupDriver: systemd
clusterDNS:
- 10.96.0.10
clusterDomain: cluster.local
aFieldOfANewerKubelet: true
kind: KubeletConfiguration
`

// TestClusterKubelet reads kube-system/kubelet-config with a bootstrap
// token, as kubeadm join does.
func TestClusterKubelet(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{ClientAuth: tls.VerifyClientCertIfGiven})
	s.AddToken("abcdef.0123456789abcdef", "system:bootstrap:abcdef", "system:bootstrappers:kubeadm:default-node-token")
	dir := write(t, t.TempDir(), map[string][]byte{"bootstrap.conf": s.Kubeconfig(t, map[string]string{"token": "abcdef.0123456789abcdef"})})
	read := func() (kubeapi.ClusterKubelet, error) {
		cfg, err := kubeapi.Load("/", filepath.Join(dir, "bootstrap.conf"))
		if err != nil {
			t.Fatal(err)
		}
		c := kubeapi.NewClient(cfg, kubeapi.Options{Timeout: 5 * time.Second})
		defer c.Close()
		return c.ClusterKubelet(context.Background())
	}
	if _, err := read(); !errors.Is(err, kubeapi.ErrNotFound) {
		t.Fatalf("a cluster without kubelet-config: %v, want ErrNotFound", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kubelet-config"},
		Data: map[string]string{"kubelet": kubeadmKubeletConfig}}
	s.SetConfigMap(cm)
	got, err := read()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.ClusterDNS, ",") != "10.96.0.10" || got.ClusterDomain != "cluster.local" || !strings.Contains(got.Source, "kube-system/kubelet-config") {
		t.Errorf("read %+v, want clusterDNS [10.96.0.10], clusterDomain cluster.local and its source", got)
	}

	for _, c := range []struct {
		data map[string]string
		want string
	}{
		{map[string]string{"config": kubeadmKubeletConfig}, `no key "kubelet"`},
		{map[string]string{"kubelet": "kind: KubeProxyConfiguration\n"}, `kind "KubeProxyConfiguration"`},
		{map[string]string{"kubelet": "clusterDNS: [10.96.0.10, \"not-an-ip\\e[2J\"]\n"}, `"not-an-ip\x1b[2J" is not an IP address`},
		{map[string]string{"kubelet": "clusterDomain: Cluster_Local\n"}, `clusterDomain "Cluster_Local"`},
		{map[string]string{"kubelet": "clusterDNS: 10.96.0.10\n"}, "not a KubeletConfiguration"},
	} {
		cm.Data = c.data
		s.SetConfigMap(cm)
		if _, err := read(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("kubelet-config %q: %v, want an error with %q", c.data, err, c.want)
		}
	}
}
