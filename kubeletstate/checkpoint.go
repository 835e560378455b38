package kubeletstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

const (
	// CPUFile is the CPU Manager's checkpoint in a kubelet's root dir.
	CPUFile = "cpu_manager_state"
	// MemoryFile is the Memory Manager's.
	MemoryFile = "memory_manager_state"
	// StaleSuffix is what a checkpoint moved aside is renamed with.
	StaleSuffix = ".numa-partition-stale"
	// MaxSize bounds a checkpoint read: kubelet's are a few KiB per pod.
	MaxSize = 16 << 20
)

// CPUCheckpoint is cpu_manager_state (kubelet's CPUManagerCheckpoint, v2).
type CPUCheckpoint struct {
	PolicyName    string `json:"policyName"`
	DefaultCPUSet string `json:"defaultCpuSet"`
	// Entries are the exclusive assignments: pod UID → container → CPUs.
	Entries map[string]map[string]string `json:"entries,omitempty"`
}

// ParseCPU decodes a cpu_manager_state; name is for the error.
func ParseCPU(b []byte, name string) (*CPUCheckpoint, error) {
	var c CPUCheckpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s is not a kubelet CPU Manager checkpoint: %w", name, err)
	}
	return &c, nil
}

// SharedPoolExhausted says whether kubelet 1.37 refuses to start on c:
// the static policy with assignments and an empty shared pool.
func (c *CPUCheckpoint) SharedPoolExhausted() bool {
	return c.PolicyName == "static" && c.DefaultCPUSet == "" && len(c.Entries) > 0
}

// Repair is what RepairSharedPool did.
type Repair struct {
	// Moved is true when the checkpoint was moved aside.
	Moved bool
	// Pods are the pod UIDs whose exclusive CPUs the moved checkpoint
	// held, for the log: kubelet admits those pods again at its start and
	// assigns their CPUs anew.
	Pods []string
	// Why says what made the checkpoint one kubelet refuses, for the log.
	Why string
}

// RepairSharedPool moves the kubelet's cpu_manager_state in root dir dir
// aside (to cpu_manager_state.numa-partition-stale) when kubelet would
// refuse to start on it (SharedPoolExhausted), and leaves it otherwise.
// Kubernetes' recipe for a checkpoint kubelet refuses is to remove it;
// the pods it names keep running, and kubelet, which admits every pod of
// its Node again when it starts, gives them their CPUs again (all of the
// partition's, as before: they were all assigned). No checkpoint: nothing
// to do; a file that is not a checkpoint is an error (kubelet will say
// what it makes of it). The file is read bounded and without following
// a symlink.
func RepairSharedPool(dir string) (Repair, error) {
	r := fsutil.NewRoot(dir)
	b, err := readCheckpoint(r, dir, CPUFile)
	if b == nil || err != nil {
		return Repair{}, err
	}
	c, err := ParseCPU(b, path.Join(dir, CPUFile))
	if err != nil {
		return Repair{}, err
	}
	if !c.SharedPoolExhausted() {
		return Repair{}, nil
	}
	return moveAside(r, dir, CPUFile, podsOf(c.Entries))
}

// readCheckpoint reads checkpoint file of root dir dir (r), bounded and
// without following a symlink: nil when there is none.
func readCheckpoint(r fsutil.Root, dir, file string) ([]byte, error) {
	b, err := r.ReadFile(file, MaxSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path.Join(dir, file), err)
	}
	return b, nil
}

// moveAside renames checkpoint file of root dir dir (r) to file +
// StaleSuffix, durably, and says so with the pods it held.
func moveAside(r fsutil.Root, dir, file string, pods []string) (Repair, error) {
	if err := r.Rename(file, file+StaleSuffix); err != nil {
		return Repair{}, fmt.Errorf("moving %s aside: %w", path.Join(dir, file), err)
	}
	if err := r.SyncDir("."); err != nil {
		return Repair{}, fmt.Errorf("moving %s aside: %w", path.Join(dir, file), err)
	}
	return Repair{Moved: true, Pods: pods}, nil
}

// podsOf are the pod UIDs of a checkpoint's entries, sorted.
func podsOf[V any](entries map[string]V) []string {
	var pods []string
	for uid := range entries {
		pods = append(pods, uid)
	}
	slices.Sort(pods)
	return pods
}
