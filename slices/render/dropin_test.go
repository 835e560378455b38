package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/kubeletgen"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// withDropIns gives partition node1 a [kubelet] and a [[partition]]
// drop-in, as the planner makes them.
func withDropIns(p *planner.Plan) {
	k := &p.Partitions[1].Kubelet
	k.ConfigDir = planner.ConfigDirOf(k.ConfigPath)
	k.DropIns = []planner.KubeletDropIn{
		{File: planner.DropInFile, Settings: map[string]any{"serializeImagePulls": false, "featureGates": map[string]any{"SomeGate": true}}},
		{File: planner.PartitionDropInFile, Settings: map[string]any{"imageGCHighThresholdPercent": int64(90)}},
	}
}

// The drop-ins are files of the kubelet's --config-dir, KubeletConfiguration
// documents kubelet accepts, restarting kubelet when they change; the
// rendered KubeletConfiguration and the other partition are as without
// them.
func TestDropInsRendered(t *testing.T) {
	plain, err := Render(seedPlan())
	require.NoError(t, err)
	plan := seedPlan()
	withDropIns(&plan)
	b, err := Render(plan)
	require.NoError(t, err)

	dir := "etc/numa-partition/kubelet-node1.yaml.d/"
	first, err := kubeletgen.Unmarshal([]byte(fileContent(t, b, dir+"50-kubelet.conf")))
	require.NoError(t, err)
	assert.Equal(t, "kubelet.config.k8s.io/v1beta1", first.APIVersion)
	assert.Equal(t, "KubeletConfiguration", first.Kind)
	assert.Equal(t, false, *first.SerializeImagePulls)
	assert.Equal(t, map[string]bool{"SomeGate": true}, first.FeatureGates)
	second, err := kubeletgen.Unmarshal([]byte(fileContent(t, b, dir+"60-partition.conf")))
	require.NoError(t, err)
	assert.Equal(t, int32(90), *second.ImageGCHighThresholdPercent)
	assert.Contains(t, fileContent(t, b, dir+"60-partition.conf"), "from the config's [[partition]] drop_in")

	unit := fileContent(t, b, unitPath(kubeletUnit("node1")))
	const flag = " \\\n    --config-dir=/etc/numa-partition/kubelet-node1.yaml.d"
	assert.Contains(t, unit, flag)
	assert.NotContains(t, fileContent(t, b, unitPath(kubeletUnit("node0"))), "--config-dir")
	for _, u := range b.Units {
		if u.Name == kubeletUnit("node1") {
			assert.Subset(t, u.Files, []string{dir + "50-kubelet.conf", dir + "60-partition.conf"})
		}
	}

	// Nothing else changes: every file of the bundle without drop-ins is
	// the same, but node1's kubelet unit and the plan.
	for _, f := range plain.Files {
		switch f.Path {
		case unitPath(kubeletUnit("node1")):
			assert.Equal(t, string(f.Content), strings.Replace(unit, flag, "", 1))
		case "etc/numa-partition/plan.json":
		default:
			assert.Equal(t, string(f.Content), fileContent(t, b, f.Path), f.Path)
		}
	}
}

// A plan file's drop-ins are held to the planner's rules where it is
// read, before render sees it.
func TestDropInsOfAPlanFile(t *testing.T) {
	plan := seedPlan()
	withDropIns(&plan)
	plan.Partitions[1].Kubelet.DropIns[1].Settings["memoryManagerPolicy"] = "None"
	data, err := json.Marshal(plan)
	require.NoError(t, err)
	_, err = planner.ParsePlan("plan.json", data)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "partition node1: kubelet.dropIns 60-partition.conf: field memoryManagerPolicy sets memoryManagerPolicy, which numa-partition sets for each partition")
}
