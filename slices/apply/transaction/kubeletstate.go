package transaction

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/numa-partition/numa-partition/kubeletstate"
	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// A kubelet's CPU and Memory Managers keep their state in its root dir and
// check it at start against their settings (kubelet's validateState):
// another policy, other reserved CPUs or memory, other hugepage pools, and
// kubelet refuses to start ("configured policy differs from state
// checkpoint policy", "the expected machine state is different from the
// real one"). Kubernetes' recipe is: drain the node, stop kubelet, remove
// the state files, start kubelet. apply does the last three when a
// kubelet's settings change, and refuses while the files still hold pods'
// exclusive CPUs or pinned memory of pods kubelet still has (drain first,
// or --reset-kubelet-state).

// kubeletStateFiles are the managers' checkpoints in a kubelet's root dir.
var kubeletStateFiles = []string{kubeletstate.CPUFile, kubeletstate.MemoryFile}

// KubeletStampName is the file in a kubelet's root dir that says under
// which settings (KubeletState.Settings) apply last started it.
const KubeletStampName = "numa-partition-managers"

// StaleSuffix is what a moved-aside state file is renamed with: the same
// as kubelet-state repair's, one name for whatever was moved aside.
const StaleSuffix = kubeletstate.StaleSuffix

// KubeletStateOnHost is a kubelet's manager state as apply found it.
type KubeletStateOnHost struct {
	Stamp  string   // the settings apply last started it with; "" when none is recorded
	Files  []string // the state files present, root-relative
	Pinned []string // pods the files hold assignments for and kubelet still has, sorted
}

// GatherKubeletState reads the state of every kubelet of d.
func GatherKubeletState(root string, d Desired) (map[string]KubeletStateOnHost, error) {
	out := map[string]KubeletStateOnHost{}
	for _, u := range d.Units {
		ks := u.KubeletState
		if ks == nil {
			continue
		}
		var st KubeletStateOnHost
		b, err := host.ReadFile(root, path.Join(ks.Dir, KubeletStampName))
		switch {
		case err == nil:
			st.Stamp = strings.TrimSpace(string(b))
		case !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("reading %s's settings stamp: %w", u.Name, err)
		}
		pods := map[string]bool{}
		for _, name := range kubeletStateFiles {
			rel := path.Join(ks.Dir, name)
			b, err := host.Root(root).ReadFile(rel, kubeletstate.MaxSize)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("reading %s's /%s: %w", u.Name, rel, err)
			}
			st.Files = append(st.Files, rel)
			var cp struct {
				Entries map[string]json.RawMessage `json:"entries"`
			}
			if err := json.Unmarshal(b, &cp); err != nil {
				return nil, fmt.Errorf("%s's /%s is not a kubelet checkpoint: %w", u.Name, rel, err)
			}
			for uid := range cp.Entries {
				pods[uid] = true
			}
		}
		// The managers drop a gone pod's entries lazily (the memory
		// manager at its next admission): an entry counts while kubelet
		// still has the pod's directory (it removes it once the pod is
		// terminated and cleaned up).
		for uid := range pods {
			if dirExists(root, path.Join(ks.Dir, "pods", uid)) {
				st.Pinned = append(st.Pinned, uid)
			}
		}
		sort.Strings(st.Pinned)
		out[u.Name] = st
	}
	return out, nil
}

// staleKubeletState says whether kubelet u must be restarted on fresh
// manager state: its settings changed since apply last started it. A
// kubelet never stamped (the first apply, or state from before stamps)
// keeps its files and is only stamped.
func staleKubeletState(u bundle.Unit, c Current) (stamp, move bool) {
	if u.KubeletState == nil {
		return false, false
	}
	st := c.KubeletStates[u.Name]
	if st.Stamp == u.KubeletState.Settings {
		return false, false
	}
	return true, st.Stamp != "" && len(st.Files) > 0
}

// PinnedKubelets are the kubelets of d that must restart on fresh
// manager state while that state holds pods they still run. It is pure.
func PinnedKubelets(d Desired, c Current) []bundle.Unit {
	var out []bundle.Unit
	for _, u := range d.Units {
		if _, move := staleKubeletState(u, c); move && len(c.KubeletStates[u.Name].Pinned) > 0 {
			out = append(out, u)
		}
	}
	return out
}

// CheckKubeletStates refuses, before anything changes, to move aside state
// that still holds pods' assignments, unless told to (reset; or a drain,
// after which apply waits for the state to let go of them).
func CheckKubeletStates(d Desired, c Current, reset bool) error {
	if reset {
		return nil
	}
	var problems []string
	for _, u := range PinnedKubelets(d, c) {
		st := c.KubeletStates[u.Name]
		problems = append(problems, fmt.Sprintf("%s: its CPU and Memory Manager settings change (%s → %s), and kubelet refuses to start on state written under other settings; /%s hold the exclusive CPUs or pinned memory of %d pods (%s): drain partition %s's Node first — apply --drain does, through the Eviction API, and uncordons it once the kubelet is back (or kubectl drain, then apply again) — or apply --reset-kubelet-state to restart it on fresh state with those pods running (kubelet then forgets their exclusive CPUs and pinned memory)",
			u.Name, st.Stamp, u.KubeletState.Settings, strings.Join(st.Files, ", /"), len(st.Pinned), strings.Join(st.Pinned, ", "), u.Partition))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}
