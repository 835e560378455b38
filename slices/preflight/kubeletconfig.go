package preflight

import (
	"fmt"
	"slices"
	"strings"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// kubeletSettings are what the checks read of a partition's rendered
// KubeletConfiguration, its drop-ins merged over it in kubelet's order.
type kubeletSettings struct {
	clientCAFile string
	failSwapOn   bool // kubelet's default: true
	cgroupDriver string
}

// renderedKubelet reads partition p's KubeletConfiguration from the
// bundle (p.Kubelet.ConfigPath) and merges its drop-ins (the bundle's
// files in p.Kubelet.ConfigDir, by name) over it, as kubelet does. ok is
// false when the bundle has none: one not made by render (a test's
// hand-built bundle), whose checks that read it are left out.
func renderedKubelet(b bundle.Bundle, p *planner.Partition) (s kubeletSettings, ok bool, err error) {
	f, ok := fileOf(b, strings.TrimPrefix(p.Kubelet.ConfigPath, "/"))
	if !ok {
		return kubeletSettings{}, false, nil
	}
	var c kubeletv1beta1.KubeletConfiguration
	if err := yaml.Unmarshal(f.Content, &c); err != nil {
		return kubeletSettings{}, false, fmt.Errorf("preflight: partition %s: the rendered %s: %w", p.Name, p.Kubelet.ConfigPath, err)
	}
	for _, d := range dropIns(b, p.Kubelet.ConfigDir) {
		// Unmarshalled over c, a drop-in sets only the fields it names.
		if err := yaml.Unmarshal(d.Content, &c); err != nil {
			return kubeletSettings{}, false, fmt.Errorf("preflight: partition %s: the rendered drop-in /%s: %w", p.Name, d.Path, err)
		}
	}
	s = kubeletSettings{clientCAFile: c.Authentication.X509.ClientCAFile, failSwapOn: true, cgroupDriver: c.CgroupDriver}
	if c.FailSwapOn != nil {
		s.failSwapOn = *c.FailSwapOn
	}
	return s, true, nil
}

// dropIns are the bundle's files directly in dir (absolute), sorted by
// name: kubelet's --config-dir order.
func dropIns(b bundle.Bundle, dir string) []bundle.File {
	if dir == "" {
		return nil
	}
	prefix := strings.TrimPrefix(dir, "/") + "/"
	var out []bundle.File
	for _, f := range b.Files {
		if rest, ok := strings.CutPrefix(f.Path, prefix); ok && !strings.Contains(rest, "/") && strings.HasSuffix(rest, ".conf") {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(x, y bundle.File) int { return strings.Compare(x.Path, y.Path) })
	return out
}
