package apply

import (
	"errors"

	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
)

// Offline: apply --dry-run, remove --dry-run and status of a root tree no
// systemd runs on (an image, a chroot before its first boot, a copy of a
// host), with a systemd.Offline for Options.Systemd (#26). What the tree
// holds is read as on a live host: the files, the record, the kubelets'
// state files, unit files and their [Install] links, the hugepage pools
// of the sysfs given. What only the live host knows is not asked and is
// said so: unit states ("unknown": a dry run starts every unit), the
// kernel's network namespaces, kubelet and allocator health, the API
// server's Nodes and their pods.

// offlineApplyWarning is a dry run's, offline.
const offlineApplyWarning = "offline (no systemd runs for this root): unit states are unknown, so the steps start every unit; " +
	"the API server (Nodes to drain) and the kernel's network namespaces were not asked"

// offlineRemoveWarning is remove --dry-run's, offline.
const offlineRemoveWarning = "offline (no systemd runs for this root): unit states are unknown, so every unit is listed as stopped; " +
	"the API server (pods bound to the Nodes) was not asked"

// errOfflineChange refuses what would change the host offline.
var errOfflineChange = errors.New("offline: only a dry run (--dry-run) reads a root no systemd runs on; changing it needs a running systemd")

// offlineDryRun refuses an offline run that is not a dry run.
func (o Options) offlineDryRun() error {
	if o.Offline && !o.DryRun {
		return errOfflineChange
	}
	return nil
}

// cgroupMode is the host's cgroup mode: Options.CgroupMode when given,
// else read from Root's sys/fs/cgroup; offline, where a tree has no
// cgroup file system, the applied record's before that.
func (o Options) cgroupMode() (transaction.CgroupMode, error) {
	if o.CgroupMode != "" {
		return o.CgroupMode, nil
	}
	return record.CgroupModeOf(o.Root, o.Offline)
}
