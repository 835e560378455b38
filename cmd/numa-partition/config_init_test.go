package main

import (
	"crypto/tls"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
)

// The generated files are the commands' output: what `make generate`
// writes and `make check-generated` compares.
func TestConfigGeneratedFilesAreCurrent(t *testing.T) {
	for _, tt := range []struct {
		args []string
		file string
	}{
		{[]string{"config", "reference"}, filepath.Join("..", "..", "docs", "config-reference.md")},
		{[]string{"config", "init", "--generic"}, filepath.Join("..", "..", "packaging", "config.toml")},
	} {
		out, err := runDiscover(t, tt.args...)
		require.NoError(t, err)
		want, err := os.ReadFile(tt.file)
		require.NoError(t, err)
		assert.Equal(t, string(want), out, "%s is stale: run `make generate`", tt.file)
	}
}

// The packaged config passes `config check` on real machines: as shipped
// it is the defaults.
func TestPackagedConfigChecks(t *testing.T) {
	conf := filepath.Join("..", "..", "packaging", "config.toml")
	for _, fixture := range []string{"hwloc-32amd64-4s2n4c-cgroup2", "ocp-bm-worker1"} {
		out, err := runDiscover(t, "--sysfs", fixtureSys(fixture), "--config", conf, "config", "check", "--hostname", "worker1")
		require.NoError(t, err, "%s: %s", fixture, out)
		assert.Empty(t, out)
	}
}

func TestConfigInitGenericRefusesHostname(t *testing.T) {
	app := newApp()
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	app.ExitErrHandler = func(*cli.Context, error) {} // return the error instead of exiting
	err := app.Run([]string{"numa-partition", "config", "init", "--generic", "--hostname", "x"})
	var coder cli.ExitCoder
	require.ErrorAs(t, err, &coder)
	assert.Equal(t, 2, coder.ExitCode())
	assert.Contains(t, err.Error(), "--generic")
}

// TestConfigInitFromCluster: the cluster's DNS, which a kubeadm worker
// takes from kube-system/kubelet-config at join, is read with the
// bootstrap kubeconfig (below --root) and made live in [kubelet]; the
// file written plans. A cluster without it is an error saying what to
// do instead.
func TestConfigInitFromCluster(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{ClientAuth: tls.VerifyClientCertIfGiven})
	s.AddToken("abcdef.0123456789abcdef", "system:bootstrap:abcdef", "system:bootstrappers:kubeadm:default-node-token")
	root := t.TempDir()
	kc := filepath.Join(root, "etc/kubernetes/bootstrap-kubelet.conf")
	require.NoError(t, os.MkdirAll(filepath.Dir(kc), 0o755))
	require.NoError(t, os.WriteFile(kc, s.Kubeconfig(t, map[string]string{"token": "abcdef.0123456789abcdef"}), 0o600))
	args := []string{"--sysfs", fixtureSys("hwloc-32amd64-4s2n4c-cgroup2"), "config", "init", "--hostname", "worker1",
		"--root", root, "--from-cluster", "/etc/kubernetes/bootstrap-kubelet.conf"}

	_, err := runDiscover(t, args...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kube-system/kubelet-config")
	assert.Contains(t, err.Error(), "set kubelet.cluster_dns and kubelet.cluster_domain in the config yourself")

	s.SetConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kubelet-config"},
		Data: map[string]string{"kubelet": "kind: KubeletConfiguration\nclusterDNS: [10.96.0.10]\nclusterDomain: cluster.local\n"}})
	out, err := runDiscover(t, args...)
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^cluster_dns = \["10\.96\.0\.10"\]$`, out, "clusterDNS live, not commented out")
	assert.Regexp(t, `(?m)^cluster_domain = "cluster\.local"$`, out)
	assert.Contains(t, out, "kube-system/kubelet-config")
	conf := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(conf, []byte(out), 0o644))
	checked, err := runDiscover(t, "--sysfs", fixtureSys("hwloc-32amd64-4s2n4c-cgroup2"), "--config", conf, "config", "check", "--hostname", "worker1")
	require.NoError(t, err, checked)

	_, err = runDiscover(t, "config", "init", "--generic", "--from-cluster", "/etc/kubernetes/bootstrap-kubelet.conf")
	require.ErrorContains(t, err, "--generic")
}
