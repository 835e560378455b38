package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simulate --partition plays a scenario's events against a partition of
// the plan, as its allocator daemon would decide (#26: simulate could
// not read a plan although the README said it replays events against
// one): from the config planned on a dump, or from a plan file.
func TestSimulateAgainstAPlannedPartition(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "events.yaml")
	require.NoError(t, os.WriteFile(events, []byte(`events:
  - add:
      apiVersion: v1
      kind: Pod
      metadata: {name: db, namespace: shop}
      spec:
        containers:
          - name: db
            resources:
              limits: {cpu: "2", memory: 4Gi}
  - add:
      apiVersion: v1
      kind: Pod
      metadata: {name: huge, namespace: shop}
      spec:
        containers:
          - name: huge
            resources:
              limits: {cpu: "2", memory: 400Gi}
`), 0o644))
	base := []string{"--sysfs", fixtureSys("hwloc-32amd64-4s2n4c-cgroup2"), "--config", filepath.Join("..", "..", "examples", "4socket", "config.toml")}
	facts := []string{"--host-facts", filepath.Join("..", "..", "examples", "4socket", "facts.json")}

	out, err := runCLI(append(append(append(base, "simulate", "--partition", "node2"), facts...), events)...)
	require.NoError(t, err, out)
	assert.Contains(t, out, "policy best-effort, scope container, 2 NUMA nodes")
	assert.Regexp(t, `shop/db\s+admitted\s+db@[23]\[memory=4Gi\]`, out, "pinned on one of node2's NUMA nodes (2, 3)")
	assert.Regexp(t, `shop/huge\s+rejected`, out)

	planFile := filepath.Join(dir, "plan.json")
	planOut, err := runCLI(append(append(base, "plan", "-o", "json"), facts...)...)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(planFile, []byte(planOut), 0o644))
	out2, err := runCLI(append(base, "simulate", "--partition", "node2", "--plan", planFile, events)...)
	require.NoError(t, err, out2)
	assert.Equal(t, out, out2, "the plan file decides as the config planned")

	_, err = runCLI(append(append(append(base, "simulate", "--partition", "node9"), facts...), events)...)
	assert.ErrorContains(t, err, `--partition "node9" is not in the plan; planned partitions: node0, node2, node4, lowlat`)
	_, err = runCLI(append(base, "simulate", "--plan", planFile, events)...)
	assert.ErrorContains(t, err, "--plan needs --partition")
	_, err = runCLI(append(append(append(base, "simulate", "--partition", "node2"), facts...), filepath.Join("..", "..", "examples", "simulate", "two-socket.yaml"))...)
	assert.ErrorContains(t, err, "it sets machine, reserved, policy, scope, which the plan's partition decides")
}
