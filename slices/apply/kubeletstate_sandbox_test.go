package apply

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
)

// writeState gives kubelet-tnode0 manager checkpoints like kubelet's,
// holding the given pods' assignments, and kubelet's directories of the
// pods that still run.
func writeState(t *testing.T, e *env, running []string, pods ...string) {
	t.Helper()
	writeStateOf(t, e, "tnode0", running, pods...)
}

// writeStateOf is writeState for partition's kubelet.
func writeStateOf(t *testing.T, e *env, partition string, running []string, pods ...string) {
	t.Helper()
	var cpuEntries, memEntries []string
	for _, p := range pods {
		cpuEntries = append(cpuEntries, `"`+p+`":{"app":"1"}`)
		memEntries = append(memEntries, `"`+p+`":{"app":[{"numaAffinity":[0],"type":"memory","size":1073741824}]}`)
	}
	dir := e.sb.Path("var/lib/kubelet-" + partition)
	applytest.Must(t, os.MkdirAll(dir, 0o755))
	applytest.Must(t, os.WriteFile(filepath.Join(dir, "cpu_manager_state"),
		[]byte(`{"policyName":"static","defaultCpuSet":"0","entries":{`+strings.Join(cpuEntries, ",")+`},"checksum":1}`), 0o600))
	applytest.Must(t, os.WriteFile(filepath.Join(dir, "memory_manager_state"),
		[]byte(`{"policyName":"Static","machineState":{},"entries":{`+strings.Join(memEntries, ",")+`},"checksum":2}`), 0o600))
	applytest.Must(t, os.RemoveAll(filepath.Join(dir, "pods")))
	for _, p := range running {
		applytest.Must(t, os.MkdirAll(filepath.Join(dir, "pods", p, "volumes"), 0o755))
	}
}

func readStamp(t *testing.T, e *env) string {
	t.Helper()
	b, err := os.ReadFile(e.sb.Path("var/lib/kubelet-tnode0/" + transaction.KubeletStampName))
	applytest.Must(t, err)
	return strings.TrimSpace(string(b))
}

// A kubelet whose managers' settings change is restarted on fresh state:
// apply stops it, moves cpu_manager_state and memory_manager_state aside
// and starts it, since kubelet refuses state written under other
// settings. While the state holds pods' assignments apply refuses, names
// the pods and says to drain, and changes nothing, unless told to reset.
func TestKubeletStateReset(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(2)
	before := e.snapshot(t, f)
	_, err := e.apply(t, f, nil)
	applytest.Must(t, err)
	if got := readStamp(t, e); got != applytest.KubeletSettings(f.Plan.Partitions[0].CPUs) {
		t.Fatalf("first apply stamped %q", got)
	}
	// kubelet ran, wrote its state, and pods were pinned.
	writeState(t, e, []string{"pod-a", "pod-b"}, "pod-a", "pod-b", "pod-gone")
	changed := e.snapshot(t, f)

	// tnode0's CPUs change, and with them its kubelet's reserved CPUs.
	f.SetSliceCPUs("tnode0", "0-1")
	rep, err := e.apply(t, f, func(o *Options) { o.DryRun = true })
	applytest.Must(t, err)
	if w := strings.Join(rep.Warnings, "\n"); !strings.Contains(w, "apply would refuse: kubelet-tnode0.service") {
		t.Errorf("dry run: warnings %q, want the refusal", w)
	}
	_, err = e.apply(t, f, nil)
	if err == nil {
		t.Fatal("apply moved pinned pods' state aside without being told to")
	}
	for _, want := range []string{"kubelet-tnode0.service", "2 pods (pod-a, pod-b)", "drain partition tnode0's Node", "--reset-kubelet-state",
		"/var/lib/kubelet-tnode0/cpu_manager_state, /var/lib/kubelet-tnode0/memory_manager_state"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal lacks %q: %v", want, err)
		}
	}
	if d := diffStates(changed, e.snapshot(t, f)); len(d) > 0 {
		t.Fatalf("the refused apply changed the host:\n%s", strings.Join(d, "\n"))
	}

	// Told to, it moves the state aside around a stop and a start.
	rep, err = e.apply(t, f, func(o *Options) { o.ResetKubeletState = true })
	applytest.Must(t, err)
	steps := strings.Join(rep.Steps, "\n")
	for _, want := range []string{
		"stop kubelet-tnode0.service (its managers' settings changed)\n" +
			"kubelet-state kubelet-tnode0.service: move /var/lib/kubelet-tnode0/cpu_manager_state, /var/lib/kubelet-tnode0/memory_manager_state aside\n" +
			"start kubelet-tnode0.service (on fresh manager state)",
	} {
		if !strings.Contains(steps, want) {
			t.Errorf("steps lack %q:\n%s", want, steps)
		}
	}
	if strings.Contains(steps, "kubelet-state kubelet-tnode1") {
		t.Errorf("tnode1's settings did not change, but its state was touched:\n%s", steps)
	}
	for _, name := range []string{"cpu_manager_state", "memory_manager_state"} {
		p := e.sb.Path("var/lib/kubelet-tnode0/" + name)
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", p, err)
		}
		if _, err := os.Stat(p + transaction.StaleSuffix); err != nil {
			t.Errorf("%s not kept aside: %v", p+transaction.StaleSuffix, err)
		}
	}
	if got := readStamp(t, e); got != applytest.KubeletSettings(f.Plan.Partitions[0].CPUs.Union(f.Plan.Partitions[1].CPUs)) {
		t.Errorf("stamp %q after the change", got)
	}
	rep, err = e.apply(t, f, nil)
	applytest.Must(t, err)
	if rep.Changed {
		t.Errorf("re-apply changed: %v", rep.Steps)
	}

	// State whose pods are gone (the Node drained; the memory manager
	// keeps their entries until its next admission) is moved aside
	// without being told to.
	writeState(t, e, nil, "pod-a")
	f.SetSliceCPUs("tnode0", "0")
	rep, err = e.apply(t, f, nil)
	applytest.Must(t, err)
	if !strings.Contains(strings.Join(rep.Steps, "\n"), "kubelet-state kubelet-tnode0.service: move") {
		t.Errorf("a drained kubelet's stale state was not moved aside:\n%s", strings.Join(rep.Steps, "\n"))
	}

	_, err = Remove(context.Background(), e.opts())
	applytest.Must(t, err)
	// remove takes its stamp away; kubelet's own files (and the ones kept
	// aside) stay in kubelet's root dir, as kubelet's.
	after := e.snapshot(t, f)
	for _, d := range diffStates(before, after) {
		if !strings.Contains(d, "var/lib/kubelet-tnode0") {
			t.Errorf("remove left: %s", d)
		}
		if strings.Contains(d, transaction.KubeletStampName) {
			t.Errorf("remove left the stamp: %s", d)
		}
	}
}
