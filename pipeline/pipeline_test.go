package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/slices/render"
)

// The 4-socket example as the README's demo plans it (make demo): the dump
// examples/4socket/sysfs names, its config and facts file.
func example() Options {
	dir := filepath.Join("..", "examples", "4socket")
	return Options{Sysfs: filepath.Join("..", "testdata", "sysfs", "hwloc-32amd64-4s2n4c-cgroup2", "sys"), Config: filepath.Join(dir, "config.toml"), ConfigRequired: true,
		FactsFile: filepath.Join(dir, "facts.json")}
}

// The pipeline plans the example as the committed plan.json says, which
// the CLI's golden test holds to `plan -o json`.
func TestPlanIsTheExamplesPlan(t *testing.T) {
	plan, topo, err := Plan(context.Background(), example())
	require.NoError(t, err)
	require.Len(t, topo.Nodes, 8)
	got, err := json.Marshal(plan)
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join("..", "examples", "4socket", "plan.json"))
	require.NoError(t, err)
	var g, w map[string]any
	require.NoError(t, json.Unmarshal(got, &g))
	require.NoError(t, json.Unmarshal(want, &w))
	delete(w, "apiVersion")
	delete(w, "kind")
	require.Equal(t, w["partitions"], g["partitions"])
	require.Equal(t, w["host"], g["host"])
}

func TestBundleRendersThePlan(t *testing.T) {
	b, plan, err := Bundle(context.Background(), example(), render.Options{Binary: "/opt/np/bin/numa-partition"})
	require.NoError(t, err)
	require.Len(t, b.Partitions, len(plan.Partitions))
	require.NotEmpty(t, b.Files)
	unit := b.Files[0]
	for _, f := range b.Files {
		if strings.HasSuffix(f.Path, "numa-partition-hugepages.service") {
			unit = f
		}
	}
	require.Contains(t, string(unit.Content), "/opt/np/bin/numa-partition", "the render options reach the files")
}

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "absent.toml")
	var log bytes.Buffer
	o := example()
	o.Config, o.ConfigRequired, o.Log = missing, false, slog.New(slog.NewTextHandler(&log, nil))
	_, _, err := Plan(context.Background(), o)
	require.NoError(t, err, "a config nobody named is all defaults")
	require.Contains(t, log.String(), "no config file, using the defaults")
	require.Contains(t, log.String(), missing)

	o.ConfigRequired = true
	_, _, err = Plan(context.Background(), o)
	require.ErrorContains(t, err, missing, "a config asked for by name must be there")

	bad := filepath.Join(dir, "bad.toml")
	require.NoError(t, os.WriteFile(bad, []byte("[kubelet]\nmax_pods = -1\n[[partition]]\nname = \"UPPER\"\nnodes = [0]\n"), 0o644))
	o.Config = bad
	_, _, err = Plan(context.Background(), o)
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "2 problems in the config:\n  bad.toml:2: key \"kubelet.max_pods\": -1"), err.Error())
	require.Contains(t, err.Error(), "\n  bad.toml:4: key \"partition[0].name\"", "each problem on a line of its own, with its file, line and key")
}

func TestHostname(t *testing.T) {
	o := example()
	o.Hostname = "rack7-host3"
	plan, _, err := Plan(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, "rack7-host3", plan.Hostname, "Hostname wins over the facts file's")
}
