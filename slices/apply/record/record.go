package record

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/internal/hostpaths"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// Path is the record's, relative to the root (package hostpaths).
const Path = hostpaths.RecordRel

// maxRecord bounds the applied record: a few KiB per partition.
const maxRecord = 16 << 20

// Record is the applied generation, kept in Path: what apply wrote
// and started, so that the next apply can diff against it, status can see
// drift and remove can undo it. Its JSON form is stable (docs/apply.md).
type Record struct {
	Generation int             `json:"generation"`
	AppliedAt  time.Time       `json:"appliedAt"`
	Version    string          `json:"version,omitempty"`
	CgroupMode cgroupmode.Mode `json:"cgroupMode"`
	Hostname   string          `json:"hostname,omitempty"`
	// ReservedCPUs are the host's CPUs (system.slice and friends).
	ReservedCPUs bitmask.CPUSet   `json:"reservedCPUs,omitzero"`
	Files        []File           `json:"files"`
	Units        []bundle.Unit    `json:"units"`
	Slices       []SliceSet       `json:"slices"`
	Hugepages    []HugepageTarget `json:"hugepages"`
	// Dirs are the directories apply created (remove deletes them when empty).
	Dirs []string `json:"dirs"`
	// Partitions maps partition names to their health endpoints and
	// Kubernetes Nodes, for status.
	Partitions []Partition `json:"partitions"`
	// Network are the network objects the applied units make; absent in
	// host mode and in records written before it existed.
	Network *Network `json:"network,omitempty"`
	// Pending is true from before an apply touches the host until it has
	// finished: then the record lists everything that apply may have
	// written or started (its own and the previous generation's), so that
	// after a kill -9 the next apply takes up the host from there, remove
	// undoes all of it and status says an apply was interrupted.
	Pending bool `json:"pending,omitempty"`
	// Cordoned are the Nodes an apply cordoned to drain them and has not
	// made schedulable again: written before the first cordon (in the
	// pending record), dropped once uncordoned. A record that still has
	// some says an apply was killed mid-drain, or a Node was not Ready in
	// time after its kubelet restarted: the next apply uncordons them once
	// Ready, and status shows them as problems.
	Cordoned []CordonedNode `json:"cordoned,omitempty"`
}

// CordonedNode is a partition's Node an apply cordoned.
type CordonedNode struct {
	Partition string `json:"partition"`
	Node      string `json:"node"`
}

// File is one file apply owns.
type File struct {
	Path   string      `json:"path"`
	SHA256 string      `json:"sha256"`
	Mode   fs.FileMode `json:"mode"`
	// Original is true when another file was at this path before the
	// first apply; it is kept under numa-partition's originals directory
	// (hostpaths.OriginalsRel) and restored by remove.
	Original bool `json:"original,omitempty"`
	// PreviousSHA256 are, in a pending record, the sha256s earlier
	// generations wrote at this path: an apply killed before it rewrote
	// the file left one of them, which is still apply's to delete.
	PreviousSHA256 []string `json:"previousSHA256,omitempty"`
}

// Wrote says whether content is what apply wrote at f's path: the
// recorded sha256, or one of the earlier generations' a killed apply
// may have left.
func (f File) Wrote(content []byte) bool {
	sum := Hash(content)
	return sum == f.SHA256 || slices.Contains(f.PreviousSHA256, sum)
}

// Partition is a partition as apply records it, the bundle's
// (bundle.Partition, whose JSON is the record's): what status, remove
// and the drains need to know about it.
type Partition = bundle.Partition

// Hash is the sha256 a record keeps of a file's content.
func Hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Read reads root's record; nil, nil when there is none. A root
// that is not a directory is an error naming it: "nothing applied" there
// would be a guess (#38: status --root /nonexistent said NOT-APPLIED).
func Read(root string) (*Record, error) {
	r0 := host.Root(root)
	p := r0.Path(Path)
	b, err := r0.ReadFile(Path, maxRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, checkRoot(root)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the applied record: %w", err)
	}
	return parse(p, b)
}

// checkRoot says whether root is a directory to read a host below.
func checkRoot(root string) error {
	fi, err := os.Stat(root)
	switch {
	case err != nil:
		return fmt.Errorf("the host's root: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("the host's root %s is not a directory", root)
	}
	return nil
}

// parse decodes the record read from path.
func parse(path string, b []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not a numa-partition record: %w", path, err)
	}
	for i, f := range r.Files {
		if problem := WrittenPathProblem(f.Path); problem != "" {
			return nil, fmt.Errorf("%s: files[%d] path %q: %s: apply cannot have written it, and remove deletes only what apply wrote; fix or move the record aside", path, i, f.Path, problem)
		}
	}
	return &r, nil
}

// File is the record's entry for path; false when r (nil before the
// first apply) has none.
func (r *Record) File(path string) (File, bool) {
	if r == nil {
		return File{}, false
	}
	for _, f := range r.Files {
		if f.Path == path {
			return f, true
		}
	}
	return File{}, false
}

// DevicesOf are the devices the recorded namespace ns holds.
func (r *Record) DevicesOf(ns string) []string {
	if r.Network == nil {
		return nil
	}
	for _, n := range r.Network.Namespaces {
		if n.Name == ns {
			return n.Devices
		}
	}
	return nil
}

// Marshal is r's JSON, as the record file holds it.
func (r *Record) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Write writes r as root's record, in place of the one there.
func (r *Record) Write(root string) error {
	b, err := r.Marshal()
	if err != nil {
		return err
	}
	return host.WriteFileAtomic(root, Path, b, 0o644)
}
