package main

import (
	"fmt"
	"log/slog"
	"strings"
)

// kubeletFlags are the per-instance flags kubelet only takes on the command
// line (they never moved into KubeletConfiguration), so every generated
// kubelet unit passes them and the stand-in must accept them.
type kubeletFlags struct {
	Config              string
	Kubeconfig          string
	BootstrapKubeconfig string
	CertDir             string
	RootDir             string
	HostnameOverride    string
	NodeLabels          string
	// Unknown are flags the stand-in does not model; kubelet has dozens,
	// so they are logged, not refused.
	Unknown []string
}

// parseFlags reads kubelet-style flags: "--name=value", "--name value" and
// a single leading dash are all accepted, as pflag does.
func parseFlags(args []string) (kubeletFlags, error) {
	var f kubeletFlags
	known := map[string]*string{
		"config":               &f.Config,
		"kubeconfig":           &f.Kubeconfig,
		"bootstrap-kubeconfig": &f.BootstrapKubeconfig,
		"cert-dir":             &f.CertDir,
		"root-dir":             &f.RootDir,
		"hostname-override":    &f.HostnameOverride,
		"node-labels":          &f.NodeLabels,
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") || arg == "-" || arg == "--" {
			f.Unknown = append(f.Unknown, arg)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		dst, ok := known[name]
		if !ok {
			// Unknown flags are treated as booleans or "--x=y": the
			// stand-in cannot know whether the next word belongs to them.
			f.Unknown = append(f.Unknown, arg)
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return f, fmt.Errorf("flag --%s needs a value", name)
			}
			i++
			value = args[i]
		}
		*dst = value
	}
	if f.Config == "" {
		return f, fmt.Errorf("--config is required: the stand-in checks the KubeletConfiguration a kubelet would load")
	}
	return f, nil
}

func (f kubeletFlags) log() {
	slog.Info("kubelet flags",
		"config", f.Config, "kubeconfig", f.Kubeconfig,
		"bootstrap-kubeconfig", f.BootstrapKubeconfig, "cert-dir", f.CertDir,
		"root-dir", f.RootDir, "hostname-override", f.HostnameOverride,
		"node-labels", f.NodeLabels)
	for _, u := range f.Unknown {
		slog.Warn("ignoring argument the stand-in does not model", "arg", u)
	}
}
