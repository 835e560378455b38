package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// The configs embedded in the provisioning examples must be valid: a typo
// there fails a whole fleet's first boot.
func TestProvisioningExamplesPlan(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "provisioning")
	var cloudInit struct {
		WriteFiles []struct {
			Path    string `json:"path"`
			Content string `json:"content"`
		} `json:"write_files"`
	}
	var butane struct {
		Storage struct {
			Files []struct {
				Path     string `json:"path"`
				Contents struct {
					Inline string `json:"inline"`
				} `json:"contents"`
			} `json:"files"`
		} `json:"storage"`
	}
	configs := map[string]string{}
	data, err := os.ReadFile(filepath.Join(dir, "cloud-init.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &cloudInit))
	for _, f := range cloudInit.WriteFiles {
		if f.Path == "/etc/numa-partition/config.toml" {
			configs["cloud-init.yaml"] = f.Content
		}
	}
	data, err = os.ReadFile(filepath.Join(dir, "butane.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &butane))
	for _, f := range butane.Storage.Files {
		if f.Path == "/etc/numa-partition/config.toml" {
			configs["butane.yaml"] = f.Contents.Inline
		}
	}
	require.Len(t, configs, 2, "each example writes /etc/numa-partition/config.toml")
	for name, content := range configs {
		conf := filepath.Join(t.TempDir(), "config.toml")
		require.NoError(t, os.WriteFile(conf, []byte(content), 0o644))
		for _, fixture := range []string{"hwloc-32amd64-4s2n4c-cgroup2", "ocp-bm-worker1"} {
			out, err := runDiscover(t, "--sysfs", fixtureSys(fixture), "--config", conf, "config", "check", "--hostname", "worker1")
			require.NoError(t, err, "%s on %s: %s", name, fixture, out)
		}
	}
}
