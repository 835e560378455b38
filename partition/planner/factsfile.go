package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	sjson "sigs.k8s.io/json"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
)

// maxFactsBytes bounds a host facts file: a few hundred bytes per
// filesystem and interface; a FIFO or a huge file there must not hang or
// bloat plan.
const maxFactsBytes = 1 << 20

// FactsFile is a host facts file (discover --host-facts-out, read by
// --host-facts): what a plan takes from the running host besides its
// sysfs, so that a plan made elsewhere from a sysfs dump and this file is
// the plan the host makes of itself. JSON keys are as written here; TOML
// keys are the snake_case ones.
type FactsFile struct {
	// Hostname is the host's name, used when neither --hostname nor
	// kubelet.hostname gives one.
	Hostname string `json:"hostname,omitempty" toml:"hostname,omitempty"`
	// TaskLimit is min(kernel.pid_max, kernel.threads-max).
	TaskLimit uint64 `json:"taskLimit" toml:"task_limit"`
	// Filesystems hold the kubelet root dirs: "/" and the mount points
	// below it the root dirs are on. A dir is on the longest one that
	// holds it.
	Filesystems []FactsFilesystem `json:"filesystems" toml:"filesystems"`
	// Interfaces are the host's network interfaces (and those of its
	// named namespaces); absent, nothing is checked against them.
	Interfaces *[]FactsInterface `json:"interfaces,omitempty" toml:"interfaces,omitempty"`
	// CgroupMode is how the host mounts cgroups, as systemd names it
	// (unified, hybrid, legacy); absent, every kubelet is shown the
	// whole machine (kubeletgen/machine.go).
	CgroupMode cgroupmode.Mode `json:"cgroupMode,omitempty" toml:"cgroup_mode,omitempty"`
}

// FactsFilesystem is a filesystem of a facts file.
type FactsFilesystem struct {
	Path string `json:"path" toml:"path"` // its mount point
	// Device tells filesystems apart (st_dev on the host); the plan
	// does not show it.
	Device        uint64 `json:"device" toml:"device"`
	CapacityBytes uint64 `json:"capacityBytes" toml:"capacity_bytes"`
}

// FactsInterface is a network interface of a facts file (Interface).
type FactsInterface struct {
	Name         string         `json:"name" toml:"name"`
	Namespace    string         `json:"namespace,omitempty" toml:"namespace,omitempty"`
	PCI          string         `json:"pci,omitempty" toml:"pci,omitempty"`
	DefaultRoute bool           `json:"defaultRoute,omitempty" toml:"default_route,omitempty"`
	Addresses    []netip.Prefix `json:"addresses,omitempty" toml:"addresses,omitempty"`
}

// DeclaredHost is a facts file's host: its name and its facts.
type DeclaredHost struct {
	Hostname string
	Facts    FixedFacts
}

// NewFactsFile is the facts file of a host named hostname whose planner
// answers were f (Root is "/"; Mounts, the other filesystems).
func NewFactsFile(hostname string, f FixedFacts) FactsFile {
	out := FactsFile{Hostname: hostname, TaskLimit: f.Tasks, CgroupMode: f.Cgroup}
	for _, fs := range append([]Filesystem{f.Root}, f.Mounts...) {
		out.Filesystems = append(out.Filesystems, FactsFilesystem(fs))
	}
	if f.NetInterfaces != nil {
		ifaces := make([]FactsInterface, 0, len(f.NetInterfaces))
		for _, i := range f.NetInterfaces {
			ifaces = append(ifaces, FactsInterface{Name: i.Name, Namespace: i.Namespace, PCI: i.PCI, DefaultRoute: i.DefaultRoute, Addresses: i.Addresses})
		}
		out.Interfaces = &ifaces
	}
	return out
}

// Marshal writes the file as JSON (indented, with a trailing newline) or,
// for a name ending in .toml, as TOML.
func (f FactsFile) Marshal(name string) ([]byte, error) {
	var b bytes.Buffer
	switch ext := factsFormat(name); ext {
	case ".json":
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(f); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	case ".toml":
		if err := toml.NewEncoder(&b).Encode(f); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	default:
		return nil, fmt.Errorf("%s: a host facts file is JSON (name ending in .json) or TOML (.toml)", name)
	}
	return b.Bytes(), nil
}

func factsFormat(name string) string { return strings.ToLower(filepath.Ext(name)) }

// LoadFacts reads a host facts file (ParseFacts), at most 1 MiB.
func LoadFacts(file string) (*DeclaredHost, error) {
	data, err := fsutil.ReadFileBounded(file, maxFactsBytes)
	if err != nil {
		return nil, fmt.Errorf("reading the host facts: %w", err)
	}
	return ParseFacts(file, data)
}

// ParseFacts decodes a host facts file, JSON or TOML by name's
// extension, strictly: an unknown key, a key given twice or in another
// case is an error, as are a missing task limit or "/" filesystem.
func ParseFacts(name string, data []byte) (*DeclaredHost, error) {
	var f FactsFile
	switch factsFormat(name) {
	case ".json":
		strict, err := sjson.UnmarshalStrict(data, &f)
		if err != nil {
			return nil, fmt.Errorf("%s: not a host facts file (discover --host-facts-out writes one): %w", name, err)
		}
		if len(strict) > 0 {
			msgs := make([]string, len(strict))
			for i, e := range strict {
				msgs[i] = e.Error()
			}
			return nil, fmt.Errorf("%s: %s; allowed keys: hostname, taskLimit, filesystems (path, device, capacityBytes), interfaces (name, namespace, pci, defaultRoute, addresses), cgroupMode, exact-case, once each", name, strings.Join(msgs, "; "))
		}
	case ".toml":
		md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&f)
		if err != nil {
			return nil, fmt.Errorf("%s: not a host facts file: %w", name, err)
		}
		if un := md.Undecoded(); len(un) > 0 {
			keys := make([]string, len(un))
			for i, k := range un {
				keys[i] = k.String()
			}
			return nil, fmt.Errorf("%s: unknown keys %s; allowed: hostname, task_limit, filesystems (path, device, capacity_bytes), interfaces (name, namespace, pci, default_route, addresses), cgroup_mode", name, strings.Join(keys, ", "))
		}
	default:
		return nil, fmt.Errorf("%s: a host facts file is JSON (name ending in .json) or TOML (.toml)", name)
	}
	return f.declared(name)
}

// tomlFactsKeys are the TOML spellings of the JSON keys errors name.
var tomlFactsKeys = map[string]string{"taskLimit": "task_limit", "capacityBytes": "capacity_bytes", "cgroupMode": "cgroup_mode"}

// declared checks the file and turns it into the planner's facts.
func (f FactsFile) declared(name string) (*DeclaredHost, error) {
	// key is a JSON key as the file spells it.
	key := func(k string) string {
		if factsFormat(name) == ".toml" {
			return tomlFactsKeys[k]
		}
		return k
	}
	if f.TaskLimit == 0 {
		return nil, fmt.Errorf("%s: %s is missing or 0: min(kernel.pid_max, kernel.threads-max) of the host, a positive integer", name, key("taskLimit"))
	}
	switch f.CgroupMode {
	case "", cgroupmode.V2, cgroupmode.Hybrid, cgroupmode.V1:
	default:
		return nil, fmt.Errorf("%s: %s %q: allowed are %q, %q and %q (as systemd names them), or none", name, key("cgroupMode"), f.CgroupMode, cgroupmode.V2, cgroupmode.Hybrid, cgroupmode.V1)
	}
	d := &DeclaredHost{Hostname: f.Hostname, Facts: FixedFacts{Tasks: f.TaskLimit, Cgroup: f.CgroupMode}}
	seen := map[string]bool{}
	for i, fs := range f.Filesystems {
		where := fmt.Sprintf("%s: filesystems[%d]", name, i)
		if !path.IsAbs(fs.Path) || path.Clean(fs.Path) != fs.Path {
			return nil, fmt.Errorf("%s: path %q must be an absolute, clean path (a mount point)", where, fs.Path)
		}
		if seen[fs.Path] {
			return nil, fmt.Errorf("%s: path %q is listed twice", where, fs.Path)
		}
		seen[fs.Path] = true
		if fs.CapacityBytes == 0 {
			return nil, fmt.Errorf("%s: %s of %s is missing or 0", where, key("capacityBytes"), fs.Path)
		}
		pf := Filesystem(fs)
		if fs.Path == "/" {
			d.Facts.Root = pf
		} else {
			d.Facts.Mounts = append(d.Facts.Mounts, pf)
		}
	}
	if !seen["/"] {
		return nil, fmt.Errorf("%s: filesystems has no entry for path \"/\": the filesystem of / is the host's share of ephemeral-storage", name)
	}
	sort.Slice(d.Facts.Mounts, func(i, j int) bool { return d.Facts.Mounts[i].Path < d.Facts.Mounts[j].Path })
	if f.Interfaces != nil {
		d.Facts.NetInterfaces = make([]Interface, 0, len(*f.Interfaces))
		for i, fi := range *f.Interfaces {
			if msg := validation.InterfaceNameProblem(fi.Name); msg != "" {
				return nil, fmt.Errorf("%s: interfaces[%d]: name %q %s", name, i, fi.Name, msg)
			}
			d.Facts.NetInterfaces = append(d.Facts.NetInterfaces, Interface{Name: fi.Name, Namespace: fi.Namespace, PCI: fi.PCI, DefaultRoute: fi.DefaultRoute, Addresses: fi.Addresses})
		}
	}
	return d, nil
}
