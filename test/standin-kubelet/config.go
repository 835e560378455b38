package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/numa/units"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

const (
	wantAPIVersion = "kubelet.config.k8s.io/v1beta1"
	wantKind       = "KubeletConfiguration"
	// kubelet's default hard eviction threshold when evictionHard is unset.
	defaultEvictionHardMemory = "100Mi"
)

// partitionName is what kubelet's systemd cgroup driver accepts as a
// cgroupRoot slice: "-" would mean nesting and "_" is refused.
var partitionName = regexp.MustCompile(`^[a-z0-9]+$`)

// loadConfig reads and strictly decodes a KubeletConfiguration: an unknown
// or misspelt field fails here as it would make kubelet refuse to start.
func loadConfig(path string) (*kubeletv1beta1.KubeletConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading kubelet config: %w", err)
	}
	var cfg kubeletv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return nil, fmt.Errorf("kubelet config %s: %w", path, err)
	}
	if err := validateConfig(&cfg); err != nil {
		return nil, fmt.Errorf("kubelet config %s: %w", path, err)
	}
	return &cfg, nil
}

// validateConfig checks what a kubelet sharing the host with siblings
// depends on, and the start-up rules kubelet itself enforces for the
// resource managers. All problems are reported at once.
func validateConfig(cfg *kubeletv1beta1.KubeletConfiguration) error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	if cfg.APIVersion != wantAPIVersion || cfg.Kind != wantKind {
		add("apiVersion/kind is %q/%q, want %q/%q", cfg.APIVersion, cfg.Kind, wantAPIVersion, wantKind)
	}
	if cfg.CgroupDriver != "systemd" {
		add("cgroupDriver is %q, want \"systemd\" (partitions are systemd slices)", cfg.CgroupDriver)
	}
	if _, err := kubepodsSlice(cfg.CgroupRoot); err != nil {
		add("cgroupRoot: %w", err)
	}
	if cfg.HealthzPort == nil || *cfg.HealthzPort <= 0 || *cfg.HealthzPort > 65535 {
		add("healthzPort must be set to a port (1-65535): sibling kubelets cannot share the default")
	}
	if cfg.Port <= 0 || cfg.Port > 65535 {
		add("port is %d, want 1-65535: sibling kubelets cannot share the default", cfg.Port)
	}
	if cfg.ContainerRuntimeEndpoint == "" {
		add("containerRuntimeEndpoint is empty")
	} else if _, err := runtimeSocket(cfg.ContainerRuntimeEndpoint); err != nil {
		add("containerRuntimeEndpoint: %w", err)
	}
	if cfg.ReservedSystemCPUs != "" {
		if _, err := bitmask.ParseCPUList(cfg.ReservedSystemCPUs); err != nil {
			add("reservedSystemCPUs %q: %w", cfg.ReservedSystemCPUs, err)
		}
	}
	switch cfg.CPUManagerPolicy {
	case "", "none":
	case "static":
		if cfg.ReservedSystemCPUs == "" && cfg.KubeReserved["cpu"] == "" && cfg.SystemReserved["cpu"] == "" {
			add("cpuManagerPolicy static needs reservedSystemCPUs or a cpu reservation (kubelet refuses a zero reservation)")
		}
	default:
		add("cpuManagerPolicy %q: allowed are none, static", cfg.CPUManagerPolicy)
	}
	switch cfg.TopologyManagerPolicy {
	case "", kubeletv1beta1.NoneTopologyManagerPolicy, kubeletv1beta1.BestEffortTopologyManagerPolicy,
		kubeletv1beta1.RestrictedTopologyManagerPolicy, kubeletv1beta1.SingleNumaNodeTopologyManagerPolicy:
	default:
		add("topologyManagerPolicy %q: allowed are none, best-effort, restricted, single-numa-node", cfg.TopologyManagerPolicy)
	}
	switch cfg.MemoryManagerPolicy {
	case "", kubeletv1beta1.NoneMemoryManagerPolicy:
	case kubeletv1beta1.StaticMemoryManagerPolicy:
		errs = append(errs, validateReservedMemory(cfg)...)
	default:
		add("memoryManagerPolicy %q: allowed are None, Static", cfg.MemoryManagerPolicy)
	}
	return errors.Join(errs...)
}

// validateReservedMemory applies kubelet's Memory Manager start-up rule:
// for every memory resource, the per-node reservedMemory must add up to
// kubeReserved + systemReserved (+ evictionHard memory.available for
// "memory"), or kubelet exits.
func validateReservedMemory(cfg *kubeletv1beta1.KubeletConfiguration) []error {
	var errs []error
	if len(cfg.ReservedMemory) == 0 {
		return []error{errors.New("memoryManagerPolicy Static needs reservedMemory")}
	}
	reserved := map[string]uint64{}
	for _, r := range cfg.ReservedMemory {
		for name, q := range r.Limits {
			b, err := units.QuantityBytes(q, q.String())
			if err != nil {
				errs = append(errs, fmt.Errorf("reservedMemory numaNode %d %s: %w", r.NumaNode, name, err))
				continue
			}
			reserved[string(name)] += b
		}
	}
	want := map[string]uint64{}
	for _, m := range []map[string]string{cfg.KubeReserved, cfg.SystemReserved} {
		for name, v := range m {
			if name != "memory" && !strings.HasPrefix(name, "hugepages-") {
				continue
			}
			b, err := units.ParseBytes(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("reservation %s: %w", name, err))
				continue
			}
			want[name] += b
		}
	}
	eviction := defaultEvictionHardMemory
	if cfg.EvictionHard != nil {
		eviction = cfg.EvictionHard["memory.available"]
	}
	switch {
	case eviction == "":
	case strings.HasSuffix(eviction, "%"):
		errs = append(errs, fmt.Errorf("evictionHard memory.available %q: a percentage cannot be checked against reservedMemory; use a quantity", eviction))
	default:
		b, err := units.ParseBytes(eviction)
		if err != nil {
			errs = append(errs, fmt.Errorf("evictionHard memory.available: %w", err))
		} else {
			want["memory"] += b
		}
	}
	names := map[string]bool{}
	for n := range reserved {
		names[n] = true
	}
	for n := range want {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		if reserved[n] != want[n] {
			errs = append(errs, fmt.Errorf("reservedMemory %s adds up to %s, but kubeReserved+systemReserved+evictionHard is %s (kubelet refuses to start)",
				n, units.FormatBytes(reserved[n]), units.FormatBytes(want[n])))
		}
	}
	return errs
}

// kubepodsSlice maps cgroupRoot "/node0.slice" to the slice kubelet's
// systemd driver puts pods in: "node0-kubepods.slice".
func kubepodsSlice(cgroupRoot string) (string, error) {
	name, ok := strings.CutPrefix(cgroupRoot, "/")
	if ok {
		name, ok = strings.CutSuffix(name, ".slice")
	}
	if !ok || !partitionName.MatchString(name) {
		return "", fmt.Errorf("%q is not a top-level slice like \"/node0.slice\" (lowercase letters and digits only: systemd reads \"-\" as nesting and kubelet refuses \"_\")", cgroupRoot)
	}
	return name + "-kubepods.slice", nil
}

// runtimeSocket returns the path of a unix:// CRI endpoint.
func runtimeSocket(endpoint string) (string, error) {
	path, ok := strings.CutPrefix(endpoint, "unix://")
	if !ok || !strings.HasPrefix(path, "/") {
		return "", fmt.Errorf("%q is not unix:///absolute/path", endpoint)
	}
	return path, nil
}
