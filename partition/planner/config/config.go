package config

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/internal/hostpaths"
)

// MaxConfigBytes is the largest config numa-partition reads (1 MiB).
const MaxConfigBytes = 1 << 20

// DefaultConfigPath is where the CLI reads the config from unless --config
// says otherwise.
const DefaultConfigPath = hostpaths.ConfigPath

// Config is the TOML config file. Every field is optional; docs/config.md
// describes each key, its default and what is allowed. Sizes and CPU lists
// stay strings here and are parsed during planning, so that one run reports
// every bad value with its key instead of stopping at the first.
type Config struct {
	Partitioning PartitioningConfig `toml:"partitioning"`
	Host         HostConfig         `toml:"host"`
	Kubelet      KubeletConfig      `toml:"kubelet"`
	Runtime      RuntimeConfig      `toml:"runtime"`
	Allocator    AllocatorConfig    `toml:"allocator"`
	Network      NetworkConfig      `toml:"network"`
	// Partitions are per-partition overrides ([[partition]]); in custom
	// mode without partitioning.groups they also define the groups.
	Partitions []PartitionConfig `toml:"partition"`

	src *source // where keys are in the file, for error lines
}

// Partitioning modes.
const (
	ModeSocket = "socket" // one partition per physical package
	ModeNode   = "node"   // one partition per NUMA node with CPUs
	ModeCustom = "custom" // partitioning.groups or [[partition]] nodes
)

// PartitioningConfig says how NUMA nodes are grouped into partitions.
type PartitioningConfig struct {
	Mode   string     `toml:"mode"`
	Groups []NodeList `toml:"groups"`
	// ExcludeNodes are kept out of every partition: their CPUs stay with
	// the host, their memory with nobody (GPU memory, CXL, ...).
	ExcludeNodes NodeList `toml:"exclude_nodes"`
}

// HostConfig is what the host keeps for itself and what apply allocates.
type HostConfig struct {
	// ReservedCPUs is "auto" (the first core of each socket with its SMT
	// siblings) or a CPU list ("0,4").
	ReservedCPUs string `toml:"reserved_cpus"`
	// MemoryNodes the host's own processes allocate from; default the
	// nodes of the reserved CPUs.
	MemoryNodes NodeList `toml:"memory_nodes"`
	// ReservedMemory places each partition's kubelet reservation
	// (kube + system + eviction) on its nodes: node id → size. Nodes of a
	// partition not named here get nothing; a partition with none of its
	// nodes named gets its whole reservation on its first node.
	ReservedMemory map[string]string `toml:"reserved_memory"`
	Hugepages      []HugepagesConfig `toml:"hugepages"`
	// UnlistedHugepages says what becomes of pages a partition's node
	// already holds in a pool Hugepages does not list: UnlistedFree
	// (default) or UnlistedAdopt (the planner's unlisted.go).
	UnlistedHugepages string `toml:"unlisted_hugepages"`
	// ReservedEphemeralStorage and ReservedPIDs are what the host keeps
	// of the filesystem of "/" and of the pid space (shares.go).
	ReservedEphemeralStorage string `toml:"reserved_ephemeral_storage"`
	ReservedPIDs             string `toml:"reserved_pids"`
}

// host.unlisted_hugepages values.
const (
	// UnlistedFree plans an unlisted pool that holds pages at 0: apply
	// and the boot oneshot free it, and refuse when its pages are in use.
	UnlistedFree = "free"
	// UnlistedAdopt plans it at the count it holds: kept, and offered by
	// the node's kubelet like a listed pool.
	UnlistedAdopt = "adopt"
)

// HugepagesConfig asks for Count pages of Size on each of Nodes.
type HugepagesConfig struct {
	Size string `toml:"size"` // "2Mi", "1Gi"
	// Count is pages per node: signed, so that -1 is read as -1 and
	// refused, not wrapped to 18446744073709551615 (#38).
	Count int64 `toml:"count"`
	// Nodes default to every partition node that has CPUs.
	Nodes NodeList `toml:"nodes"`
}

// KubeletConfig holds the settings shared by every partition's kubelet.
// Path and name values are templates: {partition}, {index}, {hostname}
// and {root_dir} are replaced per partition.
type KubeletConfig struct {
	Binary              string `toml:"binary"`
	Hostname            string `toml:"hostname"`
	ConfigPath          string `toml:"config_path"`
	RootDir             string `toml:"root_dir"`
	CertDir             string `toml:"cert_dir"`
	Kubeconfig          string `toml:"kubeconfig"`
	BootstrapKubeconfig string `toml:"bootstrap_kubeconfig"`
	DevicePluginsDir    string `toml:"device_plugins_dir"`
	PodLogsDir          string `toml:"pod_logs_dir"`
	StaticPodPath       string `toml:"static_pod_path"`

	// Ports of partition i are base + i × PortStride.
	Port         *int `toml:"port"`
	HealthzPort  *int `toml:"healthz_port"`
	ReadOnlyPort *int `toml:"read_only_port"` // 0 (default) disables it
	PortStride   *int `toml:"port_stride"`

	// The settings a [[partition]] entry may replace.
	KubeletOverrides

	// Labels and taints: a [[partition]] entry adds to them.
	Labels map[string]string `toml:"labels"`
	Taints []string          `toml:"taints"`
	// ClusterDNS and ClusterDomain are the cluster's, the same for every
	// partition (kubelet writes them into every pod's resolv.conf).
	ClusterDNS    []string `toml:"cluster_dns"`
	ClusterDomain string   `toml:"cluster_domain"`
	// DropIn is KubeletConfiguration fields of the user's, as kubelet
	// spells them, for every partition: render writes them into each
	// kubelet's --config-dir, where kubelet merges them over the rendered
	// file. A [[partition]]'s drop_in is a second file, merged over it.
	DropIn map[string]any `toml:"drop_in"`
}

// KubeletOverrides are the kubelet settings of [kubelet] that a
// [[partition]] entry may replace, declared once and embedded in both
// (BurntSushi's decoder reads an embedded struct's keys as the outer
// table's): a new overridable setting is one field here, and merge, the
// key checks and the reference's partition[] entries follow. A field is
// set when it is not its zero value (an empty string, a nil pointer, map
// or list; an explicit empty map or list is set). example is the
// reference's example of the partition[] key.
type KubeletOverrides struct {
	NodeName string `toml:"node_name" example:"\"{hostname}-gold\""`
	MaxPods  *int   `toml:"max_pods" example:"250"`

	KubeReservedMemory   string `toml:"kube_reserved_memory" example:"\"1Gi\""`
	SystemReservedMemory string `toml:"system_reserved_memory" example:"\"1Gi\""`
	EvictionHardMemory   string `toml:"eviction_hard_memory" example:"\"200Mi\""`
	// EphemeralStorage and PIDs are each partition's share of what every
	// kubelet sees whole: "auto", "N%" or an amount (shares.go).
	EphemeralStorage string `toml:"ephemeral_storage" example:"\"200Gi\""`
	PIDs             string `toml:"pids" example:"\"25%\""`

	CPUManagerPolicy        string            `toml:"cpu_manager_policy" example:"\"static\""`
	CPUManagerPolicyOptions map[string]string `toml:"cpu_manager_policy_options" example:"{ \"full-pcpus-only\" = \"true\" }"`
	MemoryManagerPolicy     string            `toml:"memory_manager_policy" example:"\"Static\""`
	TopologyManagerPolicy   string            `toml:"topology_manager_policy" example:"\"single-numa-node\""`
	TopologyManagerScope    string            `toml:"topology_manager_scope" example:"\"pod\""`
	TopologyManagerOptions  map[string]string `toml:"topology_manager_options" example:"{ \"prefer-closest-numa-nodes\" = \"true\" }"`
	ExtraArgs               []string          `toml:"extra_args" example:"[\"--v=4\"]"`
}

// Runtime modes.
const (
	RuntimeModeContainerd = "containerd" // one containerd per partition
	RuntimeModeShared     = "shared"     // every kubelet uses Endpoint
)

// RuntimeConfig chooses the container runtime of the partitions.
type RuntimeConfig struct {
	Mode       string `toml:"mode"`
	Endpoint   string `toml:"endpoint"` // template; required when shared
	Binary     string `toml:"binary"`
	ConfigPath string `toml:"config_path"`
	RootDir    string `toml:"root_dir"`
	StateDir   string `toml:"state_dir"`
	// SandboxImage is the pod sandbox ("pause") image each containerd
	// pins; empty keeps containerd's built-in default.
	SandboxImage string `toml:"sandbox_image"`
	CNIConfDir   string `toml:"cni_conf_dir"` // template
	CNIBinDir    string `toml:"cni_bin_dir"`
}

// AllocatorConfig configures each partition's allocator daemon.
type AllocatorConfig struct {
	Socket      string `toml:"socket"`
	StateDir    string `toml:"state_dir"`
	SocketGroup string `toml:"socket_group"`
	// Mode says who places the partition's containers: "kubelet"
	// (kubelet's managers; the allocator mirrors them), "nri" (the
	// allocator, through containerd's NRI) or "auto" (kubelet up to 8
	// NUMA nodes, nri beyond).
	Mode string `toml:"mode"`
	// MetricsPort is the base of the per-partition metrics port (base +
	// index × kubelet.port_stride), on the partition's address; unset is
	// DefaultMetricsPort, 0 turns metrics off.
	MetricsPort *int `toml:"metrics_port"`
	// SyncBeforeAnswer makes each decision wait for its journal record's
	// fdatasync before it is answered (the daemon's --sync-before-answer).
	SyncBeforeAnswer *bool `toml:"sync_before_answer"`
}

// PartitionConfig overrides settings of one partition. Nodes selects it:
// the partition holding those nodes (in custom mode without groups, the
// nodes define it). Unset fields keep the [kubelet] values; labels and
// taints are added to them.
type PartitionConfig struct {
	Name   string            `toml:"name"`
	Nodes  NodeList          `toml:"nodes"`
	Labels map[string]string `toml:"labels"`
	Taints []string          `toml:"taints"`

	// Each set field replaces [kubelet]'s (merge).
	KubeletOverrides

	// KubeletBinary and ContainerdBinary replace kubelet.binary and
	// runtime.binary for this partition: a new kubelet or containerd runs
	// on one partition (a canary) while the others keep theirs.
	KubeletBinary    string `toml:"kubelet_binary"`
	ContainerdBinary string `toml:"containerd_binary"`

	// AllocatorMode replaces allocator.mode for this partition.
	AllocatorMode string `toml:"allocator_mode"`
	// Address is the partition's address on network.subnet (namespace
	// mode), instead of the next one of network.pool.
	Address string `toml:"address"`
	// LocalDevices are network interfaces (by name or PCI address) that
	// move into the partition's namespace (netdevices.go).
	LocalDevices []string `toml:"local_devices"`
	// DropIn is merged by kubelet over [kubelet]'s drop_in, so it adds to
	// and overrides it field by field (tables merge, values replace).
	DropIn map[string]any `toml:"drop_in"`
}

// Parse decodes a config. name is used in error messages ("config.toml").
// Unknown keys are errors, all reported at once with their lines.
func Parse(name string, data []byte) (*Config, error) {
	if len(data) > MaxConfigBytes {
		return nil, Errors{{File: name, Msg: fmt.Sprintf("the config is %d bytes; the most numa-partition reads is %d (1 MiB)", len(data), MaxConfigBytes)}}
	}
	if line, depth := deepestNesting(data); depth > maxNesting {
		return nil, Errors{{File: name, Line: line, Msg: fmt.Sprintf("nests tables, arrays and dotted keys %d or more levels deep; no config needs more than %d", depth, maxNesting)}}
	}
	var c Config
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&c)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			e := &ConfigError{File: name, Line: pe.Position.Line, Key: pe.LastKey, Msg: strings.TrimPrefix(pe.Message, "toml: ")}
			return nil, Errors{e}
		}
		return nil, Errors{decodeError(name, err)}
	}
	c.src = newSource(name, string(data))
	col := NewCollector(&c)
	reportUnknownKeys(col, c.src, withoutUserTableKeys(md.Undecoded()))
	miscasedAt := map[string]bool{} // reported; the keys below are the same mistake
	for _, k := range md.Keys() {
		// The decoder matches keys to fields ignoring case (port, Port
		// and PORT all set kubelet.port, the last one winning), so what a
		// reviewer reads could differ from what is planned.
		if want, ok := miscased(k); ok {
			if !miscasedAt[k[:len(k)-1].String()] {
				col.Add(k.String(), "unknown key; keys are case-sensitive: write %q", want)
			}
			miscasedAt[k.String()] = true
			continue
		}
		// The decoder leaves a table field empty, silently, when the file
		// has another type there (labels = "x").
		if t, ok := fieldType(k); ok && t.Kind() == reflect.Map {
			if got := md.Type(k...); got != "Hash" {
				got = strings.ToLower(got)
				article := "a "
				if strings.ContainsRune("aeiou", rune(got[0])) {
					article = "an "
				}
				col.Add(k.String(), "must be a table like { key = \"value\" }, not %s%s", article, got)
			}
		}
	}
	if err := col.Err(); err != nil {
		return nil, err
	}
	return &c, nil
}

// maxNesting is how deep Parse lets tables, arrays and dotted keys nest:
// twice what the deepest valid config needs (4: host = { hugepages =
// [ { nodes = [0] } ] }). The decoder's time grows with the square of the
// depth (inline tables 3,000 deep took 4.8 s and 450 MB, a key of 30,000
// dotted parts 3 minutes), so depth is refused before decoding.
const maxNesting = 8

// deepestNesting scans TOML text once and returns the deepest nesting of
// brackets, braces and dotted key parts outside strings and comments, and
// the line where it reached it, stopping at the first level deeper than
// maxNesting. Malformed text is scanned as far as it goes: the decoder
// reports what is wrong with it.
func deepestNesting(data []byte) (line, deepest int) {
	depth, dots, ln := 0, 0, 1
	note := func() bool {
		if depth+dots > deepest {
			deepest, line = depth+dots, ln
		}
		return deepest > maxNesting
	}
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			ln++
			dots = 0
		case '#':
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case '"', '\'':
			i, ln = skipString(data, i, ln) // a quoted key part: its dots are text
		case '[', '{':
			depth++
			dots = 0
			if note() {
				return line, deepest
			}
		case ']', '}':
			depth = max(depth-1, 0)
			dots = 0
		case '=', ',':
			dots = 0
		case '.':
			dots++ // one more part of a dotted key (a float adds at most one)
			if note() {
				return line, deepest
			}
		}
	}
	return line, deepest
}

// skipString returns the index of the last byte of the string starting
// at data[i] and the line it ends on. A single-line string ends at the
// end of its line when it is not closed (the decoder reports that).
func skipString(data []byte, i, ln int) (int, int) {
	q := data[i]
	delim := []byte{q}
	if bytes.HasPrefix(data[i:], []byte{q, q, q}) {
		delim = []byte{q, q, q}
	}
	for i += len(delim); i < len(data); i++ {
		switch {
		case bytes.HasPrefix(data[i:], delim):
			return i + len(delim) - 1, ln
		case data[i] == '\n':
			if len(delim) == 1 {
				return i - 1, ln // the newline is scanned by the caller
			}
			ln++
		case data[i] == '\\' && q == '"' && i+1 < len(data) && data[i+1] != '\n':
			i++ // an escaped character, maybe a quote
		}
	}
	return i, ln
}

// LoadFile reads and parses a config file; errors name the file by its
// base name, as users see it in their editor tab.
func LoadFile(path string) (*Config, error) {
	data, err := fsutil.ReadFileBounded(path, MaxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return Parse(filepath.Base(path), data)
}

// File is the name errors use for this config ("" when built in code).
func (c *Config) File() string {
	if c.src == nil {
		return ""
	}
	return c.src.name
}

// typeErrRe matches toml's type errors, which are not ParseErrors:
// `toml: line 2 (last key "kubelet.max_pods"): incompatible types: ...`.
var typeErrRe = regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "([^"]*)"\): (.*)$`)

func decodeError(name string, err error) *ConfigError {
	m := typeErrRe.FindStringSubmatch(err.Error())
	if m == nil {
		return &ConfigError{File: name, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
	}
	line, _ := strconv.Atoi(m[1])
	return &ConfigError{File: name, Line: line, Key: m[2], Msg: m[3]}
}

// NetworkConfig is the [network] table.
type NetworkConfig struct {
	Mode   string `toml:"mode"`
	Uplink string `toml:"uplink"`
	Bridge string `toml:"bridge"`
	Parent string `toml:"parent"`
	// Subnet is the partitions' network: the bridge's, or the parent
	// NIC's. Gateway is the default route inside each partition (bridge:
	// the host's address on the bridge). Pool is where the partitions'
	// addresses come from, in partition order.
	Subnet  string `toml:"subnet"`
	Gateway string `toml:"gateway"`
	Pool    string `toml:"pool"`
	NAT     *bool  `toml:"nat"`
	MTU     int    `toml:"mtu"`
	// ResolvConf is the file kubelet gives pods with dnsPolicy Default
	// (and the base of cluster DNS's search path): in a namespace of its
	// own, a loopback resolver of the host (127.0.0.53) is out of reach.
	ResolvConf string `toml:"resolv_conf"`
	// NodeDirs are the host paths every partition has a directory of its
	// own at (nodedirs.go); nil: DefaultNodeDirs.
	NodeDirs []string `toml:"node_dirs"`
	// LocalDevices moves every network interface of a PCI function local
	// to a partition's NUMA nodes into its namespace (netdevices.go).
	LocalDevices *bool `toml:"local_devices"`
	// HostDevices are interfaces (by name or PCI address) that never
	// leave the host's namespace, whatever the plan finds at plan time.
	HostDevices []string `toml:"host_devices"`
}
