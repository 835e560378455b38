package preflight

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/render"
)

// Input is what the checks are made of: the bundle apply brings the host
// to, and the host.
type Input struct {
	Root   string // the host's root ("/")
	Bundle bundle.Bundle
	Mode   cgroupmode.Mode
	// Offline: Root is a tree no systemd (and no kernel) runs on; its
	// ports are not checked (nothing listens in a copy of a host).
	Offline bool
	// Own are the units of the generation applied now (the record's):
	// apply stops those it drops before it starts the new ones, so the
	// ports they hold are not taken.
	Own map[string]bool

	configs *Kubeconfigs     // every partition's kubeconfigs, read once
	asked   map[string]error // the APIServer checks' answers, by endpoint
}

// Checks are the checks of in, in the order they run: for each partition
// its binaries, CA, kubeconfig, API server (with the root "/" only: it is
// dialled from this process's network namespace), CNI plugins, swap and
// cgroup driver, then
// the ports (the host's namespace, then each partition's), then the
// cgroup mode. Everything comes from the bundle: its ports, its rendered
// KubeletConfigurations and containerd configs, and the plan it was
// rendered from (bundle.PlanPath, the plan file it installs). A bundle
// without a plan file (made by hand) is checked for its ports and cgroup
// mode only.
func Checks(in Input) ([]Check, error) {
	root := fsutil.NewRoot(in.Root)
	in.configs = NewKubeconfigs(in.Root)
	if !in.Offline && filepath.Clean(in.Root) == "/" {
		// The API servers are asked from this process's network
		// namespace: the host's only when the root is this machine's.
		in.asked = map[string]error{}
	}
	plan, err := planOf(in.Bundle)
	if err != nil {
		return nil, err
	}
	var checks []Check
	if plan != nil {
		for i := range plan.Partitions {
			pc, err := partitionChecks(in, root, &plan.Partitions[i])
			if err != nil {
				return nil, err
			}
			checks = append(checks, pc...)
		}
	}
	if !in.Offline {
		checks = append(checks, PortCheck{Root: root, Ports: in.Bundle.Ports, Own: in.Own})
		if plan != nil {
			for i := range plan.Partitions {
				p := &plan.Partitions[i]
				if p.Network != nil {
					checks = append(checks, PortCheck{Root: root, Part: p.Name, Namespace: p.Network.Namespace,
						Ports: render.PartitionPorts(p, in.Bundle.Units), Own: in.Own})
				}
			}
		}
	}
	return append(checks, CgroupModeCheck{Bundle: &in.Bundle, Mode: in.Mode}), nil
}

// planOf is the plan the bundle was rendered from, nil when it has none.
func planOf(b bundle.Bundle) (*planner.Plan, error) {
	f, ok := fileOf(b, bundle.PlanPath)
	if !ok {
		return nil, nil
	}
	// The bundle's own plan, rendered from one the planner's rules held
	// (a sandbox test's hand-made bundle carries a plan of a few fields).
	plan, err := planner.DecodePlan("/"+bundle.PlanPath, f.Content)
	if err != nil {
		return nil, fmt.Errorf("preflight: the bundle's plan: %w", err)
	}
	return plan, nil
}

// fileOf is the bundle's file at rel (root-relative).
func fileOf(b bundle.Bundle, rel string) (bundle.File, bool) {
	i := slices.IndexFunc(b.Files, func(f bundle.File) bool { return f.Path == rel })
	if i < 0 {
		return bundle.File{}, false
	}
	return b.Files[i], true
}

// partitionChecks are partition p's checks.
func partitionChecks(in Input, root fsutil.Root, p *planner.Partition) ([]Check, error) {
	kc, rendered, err := renderedKubelet(in.Bundle, p)
	if err != nil {
		return nil, err
	}
	checks := []Check{
		BinaryCheck{Root: root, Part: p.Name, Daemon: "kubelet", Path: p.Kubelet.Binary, ConfigKey: "binary in [kubelet]"},
	}
	own := p.Runtime.Kind == planner.RuntimeContainerd
	if own && p.Runtime.Binary != "" {
		checks = append(checks, BinaryCheck{Root: root, Part: p.Name, Daemon: "containerd", Path: p.Runtime.Binary, ConfigKey: "binary in [runtime]"})
	}
	if rendered {
		checks = append(checks, ClientCACheck{Root: root, Part: p.Name, Path: kc.clientCAFile, ConfigPath: p.Kubelet.ConfigPath})
	}
	checks = append(checks, KubeconfigCheck{Configs: in.configs, Part: p.Name, Kubeconfig: p.Kubelet.Kubeconfig, Bootstrap: p.Kubelet.BootstrapKubeconfig})
	if in.asked != nil {
		checks = append(checks, APIServerCheck{Configs: in.configs, Part: p.Name, Kubeconfig: p.Kubelet.Kubeconfig,
			Bootstrap: p.Kubelet.BootstrapKubeconfig, Asked: in.asked})
	}
	if own && p.Runtime.CNIBinDir != "" {
		checks = append(checks, CNIBinDirCheck{Root: root, Part: p.Name, Path: p.Runtime.CNIBinDir})
	}
	if !rendered {
		return checks, nil
	}
	checks = append(checks, SwapCheck{Root: root, Part: p.Name, FailSwapOn: kc.failSwapOn, ConfigPath: p.Kubelet.ConfigPath})
	if f, ok := fileOf(in.Bundle, strings.TrimPrefix(p.Runtime.ConfigPath, "/")); own && ok {
		checks = append(checks, CgroupDriverCheck{Part: p.Name, KubeletDriver: kc.cgroupDriver, ConfigPath: p.Kubelet.ConfigPath,
			ContainerdConfig: f.Content, ContainerdConfigPath: p.Runtime.ConfigPath})
	}
	return checks, nil
}
