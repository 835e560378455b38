package kubeletgen

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
)

// Every field this package sets is one a drop-in may not set
// (validation.ManagedFields), so no user value overrides what
// numa-partition decides: checked on every example's plan and on a plan
// with every optional setting.
func TestEveryFieldSetIsManaged(t *testing.T) {
	managed := validation.ManagedFields()
	covered := func(path string) bool {
		for _, m := range managed {
			if path == m || strings.HasPrefix(path, m+".") {
				return true
			}
		}
		return false
	}
	var plans []planner.Plan
	files, err := filepath.Glob("../examples/*/plan.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		plan, err := planner.ParsePlan(f, data)
		require.NoError(t, err)
		plans = append(plans, *plan)
	}
	full := twoNodes()
	k := &full.Partitions[1].Kubelet
	k.ClusterDNS, k.ClusterDomain, k.StaticPodPath, k.ReadOnlyPort = []string{"10.96.0.10"}, "cluster.local", "/etc/kubernetes/manifests-node1", 10255
	k.TopologyManagerOptions = map[string]string{"prefer-closest-numa-nodes": "true"}
	full.Partitions[1].Taints = []planner.Taint{{Key: "a", Effect: "NoSchedule"}}
	plans = append(plans, full)

	seen := map[string]bool{}
	for _, plan := range plans {
		for i := range plan.Partitions {
			c, err := Config(&plan, &plan.Partitions[i])
			require.NoError(t, err)
			b, err := Marshal(plan.Partitions[i].Name, c)
			require.NoError(t, err)
			var tree map[string]any
			require.NoError(t, yaml.Unmarshal(b, &tree))
			for _, path := range leaves("", tree) {
				seen[path] = true
			}
		}
	}
	var paths []string
	for p := range seen {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		assert.True(t, covered(p), "kubeletgen sets %s, which validation.managedFields does not list: a drop-in could override it", p)
	}
	assert.Contains(t, paths, "resolvConf", "the examples cover the namespaced network's field")
}

// leaves are the paths of a tree's values, descending into tables only.
func leaves(prefix string, tree map[string]any) []string {
	var out []string
	for k, v := range tree {
		if sub, ok := v.(map[string]any); ok {
			out = append(out, leaves(prefix+k+".", sub)...)
			continue
		}
		out = append(out, prefix+k)
	}
	return out
}

func TestDropIn(t *testing.T) {
	b, err := DropIn("node1", planner.KubeletDropIn{File: planner.DropInFile, Settings: map[string]any{"containerLogMaxSize": "50Mi"}})
	require.NoError(t, err)
	assert.Equal(t, "# KubeletConfiguration drop-in of numa-partition node1 from the config's [kubelet] drop_in;\n"+
		"# `numa-partition apply` overwrites this file. kubelet merges it over\n"+
		"# its --config file (docs/config.md, \"KubeletConfiguration drop-ins\").\n"+
		"apiVersion: kubelet.config.k8s.io/v1beta1\ncontainerLogMaxSize: 50Mi\nkind: KubeletConfiguration\n", string(b))
}
