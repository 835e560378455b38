package preflight

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/kubeapi"
)

// KubeconfigCheck is what the partition's kubelet joins the cluster with:
// its kubeconfig, else its bootstrap kubeconfig (TLS bootstrap, as a
// kubeadm worker joins), must exist and load (kubeapi.Load: the file, its
// cluster, user and the files it names), read below the root as that
// host's kubelet reads them. A kubeconfig that does not load while the
// bootstrap one does is a warning: kubelet bootstraps again.
type KubeconfigCheck struct {
	Configs    *Kubeconfigs // below the host's root
	Part       string
	Kubeconfig string // absolute
	Bootstrap  string // absolute; "" without TLS bootstrap
}

// Name is Kubeconfig.
func (KubeconfigCheck) Name() string { return NameKubeconfig }

// Partition is the partition whose kubelet joins with it.
func (c KubeconfigCheck) Partition() string { return c.Part }

// Check loads the kubeconfig, and the bootstrap kubeconfig when it must.
func (c KubeconfigCheck) Check() (warnings, errs []error) {
	const fix = "write the bootstrap kubeconfig (README.md, \"Joining an existing kubeadm cluster\"), or name the right files with kubeconfig and bootstrap_kubeconfig in [kubelet]"
	r := fsutil.NewRoot(c.Configs.Root())
	kpath, bpath := r.Path(relative(c.Kubeconfig)), r.Path(relative(c.Bootstrap))
	_, kerr := c.Configs.Load(c.Kubeconfig)
	if kerr == nil {
		return nil, nil
	}
	kMissing := missingFile(kerr)
	if c.Bootstrap == "" {
		if kMissing {
			return nil, []error{fmt.Errorf("partition %s: its kubelet's kubeconfig %s does not exist and it has no bootstrap kubeconfig: %s", c.Part, kpath, fix)}
		}
		return nil, []error{fmt.Errorf("partition %s: its kubelet's %w: %s", c.Part, kerr, fix)}
	}
	_, berr := c.Configs.Load(c.Bootstrap)
	switch {
	case berr == nil && kMissing:
		return nil, nil // the first start: kubelet bootstraps
	case berr == nil:
		return []error{fmt.Errorf("partition %s: its kubelet's %w; kubelet joins again with the bootstrap kubeconfig %s (remove the kubeconfig if that is what you want)", c.Part, kerr, bpath)}, nil
	case kMissing && missingFile(berr):
		return nil, []error{fmt.Errorf("partition %s: neither its kubelet's kubeconfig %s nor its bootstrap kubeconfig %s exists: %s", c.Part, kpath, bpath, fix)}
	case kMissing:
		return nil, []error{fmt.Errorf("partition %s: its kubelet has no kubeconfig %s yet, and its bootstrap %w: %s", c.Part, kpath, berr, fix)}
	}
	return nil, []error{fmt.Errorf("partition %s: its kubelet's %w, and its bootstrap %w: %s", c.Part, kerr, berr, fix)}
}

// missingFile says whether a kubeapi.Load error is the kubeconfig itself
// missing (not a file it names).
func missingFile(err error) bool {
	var ke *kubeapi.KubeconfigError
	return errors.As(err, &ke) && ke.Field == "" && errors.Is(err, fs.ErrNotExist)
}
