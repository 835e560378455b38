package preflight

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// CNIBinDirCheck is the directory the partition's containerd runs CNI
// plugins from. Missing or empty it is a warning, as kubeadm's optional
// tools are: containerd and kubelet start, but no pod gets a network
// until the plugins are there, which a CNI's DaemonSet often installs
// once the Node has joined.
type CNIBinDirCheck struct {
	Root fsutil.Root
	Part string
	Path string // absolute
}

// Name is CNIBinDir.
func (CNIBinDirCheck) Name() string { return NameCNIBinDir }

// Partition is the partition whose containerd runs the plugins.
func (c CNIBinDirCheck) Partition() string { return c.Part }

// Check lists the directory.
func (c CNIBinDirCheck) Check() (warnings, errs []error) {
	return errorsOf(c.problem()), nil
}

func (c CNIBinDirCheck) problem() error {
	const fix = "install the CNI plugins there (your CNI's DaemonSet may do it once the Node joined), or name their directory with cni_bin_dir in [runtime]"
	where := c.Root.Path(relative(c.Path))
	entries, err := c.Root.ReadDir(relative(c.Path))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("partition %s: the CNI plugin directory %s does not exist, and no pod gets a network without it: %s", c.Part, where, fix)
	case err != nil:
		return fmt.Errorf("partition %s: the CNI plugin directory: %w; %s", c.Part, err, fix)
	case len(entries) == 0:
		return fmt.Errorf("partition %s: the CNI plugin directory %s is empty, and no pod gets a network without plugins: %s", c.Part, where, fix)
	}
	return nil
}
