package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"
	"sigs.k8s.io/yaml"

	"github.com/numa-partition/numa-partition/internal/output"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
)

// typeMetaFirst checks that out, in format, is one object whose first
// two fields are apiVersion and kind (the doc of kind), and returns it.
func typeMetaFirst(t *testing.T, format, kind, out string) map[string]any {
	t.Helper()
	var head string
	if format == "yaml" {
		head = "apiVersion: " + output.APIVersion + "\nkind: " + kind + "\n"
	} else {
		head = "{\n  \"apiVersion\": \"" + output.APIVersion + "\",\n  \"kind\": \"" + kind + "\""
	}
	require.True(t, strings.HasPrefix(out, head), "%s output does not start with apiVersion and kind %s:\n%.300s", format, kind, out)
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(out), &doc), "one object (YAML reads JSON too):\n%.300s", out)
	assert.Equal(t, output.APIVersion, doc["apiVersion"])
	assert.Equal(t, kind, doc["kind"])
	return doc
}

// Issue 26: every kind writes apiVersion and kind first, in JSON and in
// YAML; none of its types has a field of either name, which the
// envelope's would hide; each is printed by a command that exists; and
// writeData refuses a value of another type than its kind's.
func TestEveryOutputKindHasTypeMeta_Issue26(t *testing.T) {
	commands := map[string]bool{}
	for _, c := range newApp().Commands {
		commands[c.Name] = true
	}
	kinds := map[string]bool{}
	for _, k := range outputKinds {
		assert.False(t, kinds[k.kind], "kind %s listed twice", k.kind)
		kinds[k.kind] = true
		assert.True(t, commands[k.command], "kind %s: no command %s", k.kind, k.command)
		for _, format := range []string{"json", "yaml"} {
			var b bytes.Buffer
			require.NoError(t, writeData(&b, format, k.kind, reflect.New(k.typ).Interface()), k.kind)
			typeMetaFirst(t, format, k.kind, b.String())
		}
		for _, f := range output.Schema(k.typ) {
			assert.NotContains(t, output.Fields, f.Path, "kind %s has its own %s", k.kind, f.Path)
		}
	}
	var b bytes.Buffer
	assert.ErrorContains(t, writeData(&b, "json", kindStatus, buildInfo{}), "output: kind Status is written from status.Status, not main.buildInfo")
	assert.ErrorContains(t, writeData(&b, "json", "Nothing", buildInfo{}), `kind "Nothing" is not in outputKinds`)
	assert.Empty(t, b.String(), "nothing written")
}

// The commands that run without a host to change print their kind, in
// JSON and YAML, with their own fields after apiVersion and kind.
func TestCommandsPrintTheirKind_Issue26(t *testing.T) {
	cfg := filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml")
	base := []string{"--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg}
	for _, c := range []struct {
		kind string
		args []string
		key  string // one of the object's own fields
	}{
		{kindTopology, append([]string{"discover"}, base...), "sockets"},
		{kindPlan, append([]string{"plan", "--hostname", "h"}, base...), "nodeResources"},
		{kindRenderBundle, append([]string{"render", "--hostname", "h"}, base...), "units"},
		{kindSimulation, []string{"simulate", "../../examples/simulate/two-socket.yaml"}, "outcomes"},
		{kindVersion, []string{"version"}, "goVersion"},
	} {
		for _, format := range []string{"json", "yaml"} {
			out, err := runOut(append(c.args, "-o", format)...)
			require.NoError(t, err, "%s -o %s: %s", c.args[0], format, out)
			doc := typeMetaFirst(t, format, c.kind, out)
			assert.Contains(t, doc, c.key, "%s -o %s", c.args[0], format)
		}
	}

	// The allocator clients, against a daemon's answers.
	sockDir := fakeDaemon(t)
	for _, c := range []struct {
		kind string
		args []string
		key  string
	}{
		{kindAllocationList, []string{"allocations"}, "items"},
		{kindAdmission, []string{"admit", "-f", "../../examples/workloads/pod-red.yaml", "--partition", "node0"}, "manifestKind"},
		{kindRelease, []string{"release", "--partition", "node0", "uid-1"}, "released"},
	} {
		for _, format := range []string{"json", "yaml"} {
			out, err := runOut(append(c.args, "--socket-dir", sockDir, "-o", format)...)
			require.NoError(t, err, "%s -o %s: %s", c.args[0], format, out)
			doc := typeMetaFirst(t, format, c.kind, out)
			assert.Contains(t, doc, c.key)
		}
	}
	out, err := runOut("allocations", "--socket-dir", sockDir, "-o", "json")
	require.NoError(t, err)
	var list struct {
		Items []daemonapi.AllocationsResponse `json:"items"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	require.Len(t, list.Items, 1, "a list's items, not a bare array")
	assert.Equal(t, "node0", list.Items[0].Partition)
	out, err = runOut("admit", "-f", "../../examples/workloads/pod-red.yaml", "--partition", "node0", "--socket-dir", sockDir, "-o", "json")
	require.NoError(t, err)
	assert.Contains(t, out, `"manifestKind": "Pod"`, "the manifest's kind beside the object's")
}

// runOut runs a command line as main does (flags anywhere), returning
// the exit error instead of exiting.
func runOut(args ...string) (string, error) {
	return runRaw(append([]string{"--log-level", "error"}, args...)...)
}

// runRaw is runOut with the logs at their default level.
func runRaw(args ...string) (string, error) {
	var out bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &out
	app.ExitErrHandler = func(*cli.Context, error) {}
	err := runArgs(context.Background(), app, append([]string{"numa-partition"}, args...))
	return out.String(), err
}

// fakeDaemon serves canned allocator answers on DIR/node0.sock.
func fakeDaemon(t *testing.T) string {
	decision := allocator.Decision{PodUID: "uid-1", Pod: "default/red", Admitted: true, Pinned: true}
	return serveDaemon(t, map[string]any{
		daemonapi.PathAllocations: daemonapi.AllocationsResponse{Partition: "node0", Generation: 1, Allocations: []allocator.Decision{decision}},
		daemonapi.PathAdmit:       daemonapi.AdmitResponse{Partition: "node0", Kind: "Pod", Decision: decision, Generation: 1},
		daemonapi.PathRelease:     daemonapi.ReleaseResponse{Partition: "node0", PodUID: "uid-1", Released: true, Generation: 2},
	})
}

// serveDaemon serves answers (by request path) on DIR/node0.sock.
func serveDaemon(t *testing.T, answers map[string]any) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "np-out") // short: a socket path has a limit
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, "node0.sock"))
	require.NoError(t, err)
	mux := http.NewServeMux()
	for path, v := range answers {
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(v)
		})
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return dir
}

// Issue 26: plan -o json and -o yaml files are read back by render
// --plan with their apiVersion and kind; a file of another kind or
// apiVersion is refused, naming the file and the field; one written
// before (no apiVersion, no kind) is still read.
func TestPlanFileRoundTrip_Issue26(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml")
	base := []string{"--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg, "--hostname", "h"}
	render := func(file, out string) error {
		_, err := runOut(append([]string{"render", "--plan", file, "--out", filepath.Join(dir, out)}, base...)...)
		return err
	}
	for _, format := range []string{"json", "yaml"} {
		written, err := runOut(append([]string{"plan", "-o", format}, base...)...)
		require.NoError(t, err)
		typeMetaFirst(t, format, kindPlan, written)
		file := filepath.Join(dir, "plan."+format)
		require.NoError(t, os.WriteFile(file, []byte(written), 0o644))
		require.NoError(t, render(file, "out-"+format), "plan -o %s is read back", format)

		var wrongKind, wrongVersion string
		if format == "json" {
			wrongKind = strings.Replace(written, `"kind": "Plan"`, `"kind": "Topology"`, 1)
			wrongVersion = strings.Replace(written, `"apiVersion": "`+output.APIVersion+`"`, `"apiVersion": "numa-partition.io/v1"`, 1)
		} else {
			wrongKind = strings.Replace(written, "\nkind: Plan\n", "\nkind: Topology\n", 1)
			wrongVersion = strings.Replace(written, "apiVersion: "+output.APIVersion+"\n", "apiVersion: numa-partition.io/v1\n", 1)
		}
		require.NotEqual(t, written, wrongKind)
		require.NotEqual(t, written, wrongVersion)
		bad := filepath.Join(dir, "bad-kind."+format)
		require.NoError(t, os.WriteFile(bad, []byte(wrongKind), 0o644))
		assert.ErrorContains(t, render(bad, "no-kind-"+format), bad+`: kind "Topology": want kind Plan`)
		bad = filepath.Join(dir, "bad-version."+format)
		require.NoError(t, os.WriteFile(bad, []byte(wrongVersion), 0o644))
		assert.ErrorContains(t, render(bad, "no-version-"+format), bad+`: apiVersion "numa-partition.io/v1": this build reads `+output.APIVersion)
		_, err = os.Stat(filepath.Join(dir, "no-kind-"+format))
		assert.True(t, os.IsNotExist(err), "nothing rendered")
	}

	// A plan file written before apiVersion and kind.
	written, err := runOut(append([]string{"plan", "-o", "json"}, base...)...)
	require.NoError(t, err)
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(written), &doc))
	delete(doc, "apiVersion")
	delete(doc, "kind")
	old, err := json.Marshal(doc)
	require.NoError(t, err)
	file := filepath.Join(dir, "old.json")
	require.NoError(t, os.WriteFile(file, old, 0o644))
	assert.NoError(t, render(file, "out-old"))
}
