package record

import (
	"fmt"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/slices/apply/host"
)

// CgroupModeOf is the cgroup mode of the host at root, read from its
// sys/fs/cgroup; offline (a tree no systemd runs on, which may have no
// cgroup file system) the applied record's first, and an error naming
// --cgroup-mode when neither says. Apply, status and diff take the mode
// from here, so that an offline root is read the same way by each.
func CgroupModeOf(root string, offline bool) (cgroupmode.Mode, error) {
	if offline {
		rec, err := Read(root)
		if err != nil {
			return "", err
		}
		if rec != nil && rec.CgroupMode != "" {
			return rec.CgroupMode, nil
		}
	}
	mode, err := cgroupmode.Detect(host.Root(root))
	if err != nil && offline {
		return "", fmt.Errorf("%w; offline, with nothing applied below the root, give the host's mode with --cgroup-mode", err)
	}
	return mode, err
}
