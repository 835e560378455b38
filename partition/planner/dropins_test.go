package planner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// A drop-in may set no field numa-partition manages: each is refused by
// name at its file, line and key, [kubelet]'s and a [[partition]]'s.
func TestDropInRefusesManagedFields(t *testing.T) {
	got := planErr(t, seedSpec, `[kubelet.drop_in]
serializeImagePulls = false
reservedSystemCPUs = "0"

[[partition]]
nodes = [1]
[partition.drop_in]
registerNode = false
authentication = { x509 = { clientCAFile = "/x.crt" } }
`)
	assert.Equal(t, `config.toml:3: key "kubelet.drop_in.reservedSystemCPUs": sets reservedSystemCPUs, which numa-partition sets for each partition (set host.reserved_cpus instead; the managed fields are listed under kubelet.drop_in in docs/config-reference.md)`+"\n"+
		`config.toml:8: key "partition[0].drop_in.registerNode": sets registerNode, which no partition's kubelet may have: the partition's Node must register with the API server, or no pod reaches it`+"\n"+
		`config.toml:9: key "partition[0].drop_in.authentication.x509.clientCAFile": sets authentication.x509.clientCAFile, which numa-partition sets for each partition (numa-partition decides it; the managed fields are listed under kubelet.drop_in in docs/config-reference.md)`, got)
}

func TestDropInValues(t *testing.T) {
	got := planErr(t, seedSpec, "[kubelet.drop_in]\nimageGCHighThresholdPercent = \"80\"\nimageGCLowThresholdPercent = nan\n")
	assert.Contains(t, got, `config.toml:2: key "kubelet.drop_in.imageGCHighThresholdPercent": kubelet could not read it and would not start: cannot unmarshal string`)
	assert.Contains(t, got, `config.toml:1: key "kubelet.drop_in": holds a value a KubeletConfiguration cannot carry`)
}

// [kubelet]'s drop-in reaches every partition, a [[partition]]'s only
// its own, as a second file kubelet merges over the first; the plan
// holds JSON values, so a plan file gives back the same plan.
func TestDropInsPlanned(t *testing.T) {
	c, err := config.Parse("config.toml", []byte(`[kubelet]
hostname = "h"
[kubelet.drop_in]
serializeImagePulls = false
imageGCHighThresholdPercent = 80
featureGates = { SomeGate = true }
someFieldOfANewerKubelet = "x"

[[partition]]
nodes = [1]
[partition.drop_in]
imageGCHighThresholdPercent = 90
`))
	require.NoError(t, err)
	plan, err := NewPlan(synth(seedSpec), c)
	require.NoError(t, err)
	node0, node1 := plan.Partitions[0].Kubelet, plan.Partitions[1].Kubelet
	cluster := KubeletDropIn{File: DropInFile, Settings: map[string]any{
		"serializeImagePulls": false, "imageGCHighThresholdPercent": int64(80),
		"featureGates": map[string]any{"SomeGate": true}, "someFieldOfANewerKubelet": "x"}}
	assert.Equal(t, []KubeletDropIn{cluster}, node0.DropIns)
	assert.Equal(t, []KubeletDropIn{cluster, {File: PartitionDropInFile, Settings: map[string]any{"imageGCHighThresholdPercent": int64(90)}}}, node1.DropIns)
	assert.Equal(t, "/etc/numa-partition/kubelet-node0.yaml.d", node0.ConfigDir)
	assert.Equal(t, "/etc/numa-partition/kubelet-node1.yaml.d", node1.ConfigDir)
	warned := strings.Join(plan.Warnings, "\n")
	assert.Contains(t, warned, "kubelet.drop_in.someFieldOfANewerKubelet: is not a field of kubelet 1.37's KubeletConfiguration")

	data, err := json.Marshal(plan)
	require.NoError(t, err)
	back, err := ParsePlan("plan.json", data)
	require.NoError(t, err)
	assert.Equal(t, plan.Partitions[1].Kubelet, back.Partitions[1].Kubelet)
	require.NoError(t, CheckPlanFile(back))
}

// A plan file is held to the same rules: a managed field, a file name
// of its own or a configDir elsewhere are refused.
func TestDropInsPlanFile(t *testing.T) {
	c, err := config.Parse("config.toml", []byte("[kubelet]\nhostname = \"h\"\n[kubelet.drop_in]\nserializeImagePulls = false\n"))
	require.NoError(t, err)
	plan, err := NewPlan(synth(seedSpec), c)
	require.NoError(t, err)
	for _, tt := range []struct {
		edit func(k *Kubelet)
		want string
	}{
		{func(k *Kubelet) { k.DropIns[0].Settings["cpuManagerPolicy"] = "none" }, "partition node0: kubelet.dropIns 50-kubelet.conf: field cpuManagerPolicy sets cpuManagerPolicy"},
		{func(k *Kubelet) { k.DropIns[0].File = "../../systemd/system/x.conf" }, `partition node0: kubelet.dropIns: file "../../systemd/system/x.conf": allowed are 50-kubelet.conf and 60-partition.conf, once each`},
		{func(k *Kubelet) { k.ConfigDir = "/etc/numa-partition/other.d" }, `partition node0: kubelet.configDir "/etc/numa-partition/other.d" must be "/etc/numa-partition/kubelet-node0.yaml.d"`},
		{func(k *Kubelet) { k.DropIns = nil }, `partition node0: kubelet.configDir "/etc/numa-partition/kubelet-node0.yaml.d" without drop-ins`},
	} {
		data, err := json.Marshal(plan)
		require.NoError(t, err)
		p, err := ParsePlan("plan.json", data)
		require.NoError(t, err)
		tt.edit(&p.Partitions[0].Kubelet)
		err = CheckPlanFile(p)
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), tt.want)
		}
	}
}
