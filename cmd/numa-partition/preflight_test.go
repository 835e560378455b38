package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// apply --dry-run lists the preflight's checks: in --output json under
// preflight.results, in the table as one line, their errors as what apply
// would refuse (warnings, on standard error); --ignore-preflight-errors
// makes them warnings, and a name no check has is refused.
func TestApplyDryRunListsPreflight(t *testing.T) {
	cfg := filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml")
	base := []string{"--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg, "--hostname", "h", "--root", t.TempDir(), "--cgroup-mode", "unified"}

	stdout, stderr, code := runMain(append([]string{"apply", "--dry-run", "-o", "json"}, base...)...)
	require.Equal(t, 0, code, stderr)
	var rep struct {
		Preflight struct {
			Results []struct {
				Check, Partition, Status string
				Errors                   []string
			}
		}
		Warnings []string
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	seen := map[string]string{}
	for _, r := range rep.Preflight.Results {
		seen[r.Check+" "+r.Partition] = r.Status
	}
	assert.Equal(t, "error", seen["KubeletBinary node0"], stdout)
	assert.Equal(t, "error", seen["Kubeconfig node1"], stdout)
	assert.Equal(t, "warning", seen["CNIBinDir node0"], stdout)
	assert.Equal(t, "pass", seen["CgroupMode "], stdout)
	assert.Contains(t, stderr, "warning: apply would refuse: preflight [ERROR KubeletBinary]: partition node0: the kubelet binary ")

	stdout, stderr, code = runMain(append([]string{"apply", "--dry-run", "--ignore-preflight-errors", "KubeletBinary,containerdbinary", "--ignore-preflight-errors=ClientCA"}, base...)...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "preflight: 15 checks, 2 failed (Kubeconfig node0, Kubeconfig node1)")
	assert.Contains(t, stderr, "warning: preflight [WARNING KubeletBinary]: partition node0")
	assert.NotContains(t, stderr, "[ERROR KubeletBinary]")

	_, stderr, code = runMain(append([]string{"apply", "--dry-run", "--ignore-preflight-errors", "Kubelet"}, base...)...)
	assert.Equal(t, 2, code)
	assert.True(t, strings.Contains(stderr, "--ignore-preflight-errors Kubelet: no such check"), stderr)
}
