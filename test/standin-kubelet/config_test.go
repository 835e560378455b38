package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/stretchr/testify/require"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

func TestLoadConfigValid(t *testing.T) {
	cfg, err := loadConfig("testdata/valid.yaml")
	require.NoError(t, err)
	require.Equal(t, "/node0.slice", cfg.CgroupRoot)
	require.EqualValues(t, 10248, *cfg.HealthzPort)
}

// TestLoadConfigRefuses edits the valid config one way at a time; each
// edit must be refused with a message naming the problem.
func TestLoadConfigRefuses(t *testing.T) {
	valid, err := os.ReadFile("testdata/valid.yaml")
	require.NoError(t, err)
	cases := []struct {
		name, old, new, wantErr string
	}{
		{"unknown field", "cgroupDriver: systemd", "cgroupDriver: systemd\ncgroupDriverr: systemd", `unknown field "cgroupDriverr"`},
		{"wrong kind", "kind: KubeletConfiguration", "kind: KubeProxyConfiguration", "apiVersion/kind"},
		{"cgroupfs driver", "cgroupDriver: systemd", "cgroupDriver: cgroupfs", `cgroupDriver is "cgroupfs"`},
		{"nested root", "cgroupRoot: /node0.slice", "cgroupRoot: /numa-node0.slice", "not a top-level slice"},
		{"underscore root", "cgroupRoot: /node0.slice", "cgroupRoot: /node_0.slice", "not a top-level slice"},
		{"no slice", "cgroupRoot: /node0.slice", "cgroupRoot: /node0", "not a top-level slice"},
		{"no healthz port", "healthzPort: 10248\n", "", "healthzPort must be set"},
		{"no port", "port: 10250\n", "", "port is 0"},
		{"tcp runtime", "unix:///run/containerd-node0/containerd.sock", "tcp://127.0.0.1:1", "not unix:///absolute/path"},
		{"bad reserved cpus", `reservedSystemCPUs: "0,2-3"`, `reservedSystemCPUs: "3-1"`, "reservedSystemCPUs"},
		{"static cpu without reservation", `reservedSystemCPUs: "0,2-3"`, "", "needs reservedSystemCPUs"},
		{"bad topology policy", "single-numa-node", "single-numa", "topologyManagerPolicy"},
		{"reserved memory short", "memory: 1100Mi", "memory: 1000Mi", "reservedMemory memory adds up to 1000Mi, but kubeReserved+systemReserved+evictionHard is 1100Mi"},
		{"hugepages not reserved", "    hugepages-2Mi: 4Mi\n", "", "reservedMemory hugepages-2Mi adds up to 0"},
		{"percent eviction", "memory.available: 100Mi", "memory.available: 5%", "percentage"},
		{"static memory without reservation", "reservedMemory:\n- numaNode: 0\n  limits:\n    memory: 1100Mi\n    hugepages-2Mi: 4Mi\n", "", "Static needs reservedMemory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			edited := strings.Replace(string(valid), c.old, c.new, 1)
			require.NotEqual(t, string(valid), edited, "the edit must change the config")
			path := filepath.Join(t.TempDir(), "kubelet.yaml")
			require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
			_, err := loadConfig(path)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.wantErr)
			require.Contains(t, err.Error(), path, "the error names the file")
		})
	}
}

func TestDefaultEvictionCountsTowardsReservedMemory(t *testing.T) {
	valid, err := os.ReadFile("testdata/valid.yaml")
	require.NoError(t, err)
	// Without evictionHard kubelet assumes memory.available 100Mi: the
	// valid reservation (500+500+100) must still add up.
	edited := strings.Replace(string(valid), "evictionHard:\n  memory.available: 100Mi\n", "", 1)
	require.NotEqual(t, string(valid), edited)
	path := filepath.Join(t.TempDir(), "kubelet.yaml")
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
	_, err = loadConfig(path)
	require.NoError(t, err)
}

func TestKubepodsSlice(t *testing.T) {
	got, err := kubepodsSlice("/node1.slice")
	require.NoError(t, err)
	require.Equal(t, "node1-kubepods.slice", got)
}

func TestParseFlags(t *testing.T) {
	f, err := parseFlags([]string{
		"--config=/etc/kubernetes/node0/kubelet.yaml", "--root-dir", "/var/lib/kubelet-node0",
		"-hostname-override=host-node0", "--node-labels", "a=b,c=d", "--v=2", "--fail-swap-on",
		"--kubeconfig=/k", "--bootstrap-kubeconfig", "/b", "--cert-dir=/c", "stray",
	})
	require.NoError(t, err)
	require.Equal(t, kubeletFlags{
		Config: "/etc/kubernetes/node0/kubelet.yaml", RootDir: "/var/lib/kubelet-node0",
		HostnameOverride: "host-node0", NodeLabels: "a=b,c=d", Kubeconfig: "/k",
		BootstrapKubeconfig: "/b", CertDir: "/c",
		Unknown: []string{"--v=2", "--fail-swap-on", "stray"},
	}, f)
}

func TestParseFlagsRefuses(t *testing.T) {
	_, err := parseFlags([]string{"--root-dir=/x"})
	require.ErrorContains(t, err, "--config is required")
	_, err = parseFlags([]string{"--config"})
	require.ErrorContains(t, err, "--config needs a value")
}

func TestPodCPUs(t *testing.T) {
	online := bitmask.MustParseCPUList("0-3")
	cases := []struct {
		name, policy, reserved string
		options                map[string]string
		want                   string
		set                    bool
		wantErr                string
	}{
		{name: "none policy sets nothing", policy: "none", want: ""},
		{name: "static strict excludes reserved", policy: "static", reserved: "0,2-3", options: map[string]string{"strict-cpu-reservation": "true"}, want: "1", set: true},
		{name: "static without strict keeps reserved in the pool", policy: "static", reserved: "0", want: "0-3", set: true},
		{name: "everything reserved", policy: "static", reserved: "0-3", options: map[string]string{"strict-cpu-reservation": "true"}, wantErr: "leaves no CPU"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := &kubeletv1beta1.KubeletConfiguration{CPUManagerPolicy: c.policy, ReservedSystemCPUs: c.reserved, CPUManagerPolicyOptions: c.options}
			got, set, err := podCPUs(cfg, online)
			if c.wantErr != "" {
				require.ErrorContains(t, err, c.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.set, set)
			require.Equal(t, c.want, got.String())
		})
	}
}

func TestCPUMask(t *testing.T) {
	require.Equal(t, []byte{0x0e}, cpuMask(bitmask.MustParseCPUList("1-3")))
	require.Equal(t, []byte{0x01, 0x01}, cpuMask(bitmask.MustParseCPUList("0,8")))
	require.Nil(t, cpuMask(bitmask.CPUSet{}))
}
