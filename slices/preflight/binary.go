package preflight

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// BinaryCheck is a daemon's binary the partition's unit runs
// (ExecStart=): a regular, executable file below the root. A link is
// followed inside the root only, as the kernel does for a process
// chrooted there. Missing, it is an error (kubeadm's mandatory
// InPathCheck): the unit would fail at its start.
type BinaryCheck struct {
	Root      fsutil.Root
	Part      string
	Daemon    string // "kubelet", "containerd"
	Path      string // absolute, as the unit names it
	ConfigKey string // the config key that names it, for the message
}

// Name is KubeletBinary or ContainerdBinary.
func (c BinaryCheck) Name() string {
	if c.Daemon == "containerd" {
		return NameContainerdBinary
	}
	return NameKubeletBinary
}

// Partition is the partition whose unit runs the binary.
func (c BinaryCheck) Partition() string { return c.Part }

// Check stats the binary.
func (c BinaryCheck) Check() (warnings, errs []error) {
	return nil, errorsOf(c.problem())
}

func (c BinaryCheck) problem() error {
	fi, err := c.Root.Stat(relative(c.Path))
	where := c.Root.Path(relative(c.Path))
	fix := fmt.Sprintf("install %s there, or name where it is with %s", c.Daemon, c.ConfigKey)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("partition %s: the %s binary %s does not exist: %s", c.Part, c.Daemon, where, fix)
	case err != nil:
		return fmt.Errorf("partition %s: the %s binary: %w; %s", c.Part, c.Daemon, err, fix)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("partition %s: the %s binary %s is %s, %w: %s", c.Part, c.Daemon, where, fsutil.DescribeMode(fi.Mode()), errNotRegular, fix)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("partition %s: the %s binary %s is not executable (mode %s): chmod +x it, or %s", c.Part, c.Daemon, where, fi.Mode().Perm(), fix)
	}
	return nil
}

// relative is an absolute host path as Root takes it.
func relative(abs string) string { return strings.TrimPrefix(abs, "/") }
