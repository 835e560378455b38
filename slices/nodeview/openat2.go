package nodeview

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// CheckOpenat2Hidden says whether openat2(2) answers ENOSYS to the calling
// process, as the kubelet unit's SystemCallFilter= asks on cgroup v2
// (usage.go). systemd ignores a system call name its libseccomp does not
// know (openat2 came with libseccomp 2.5.0): kubelet would then be
// refused the slice's usage files bound over the root's and report a
// usage of 0, so memory.available would never fall. Run as the kubelet's
// first ExecStartPre=, the check stops the kubelet instead, with the
// reason in its journal.
func CheckOpenat2Hidden() error {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC})
	switch {
	case errors.Is(err, unix.ENOSYS):
		return nil
	case err == nil:
		unix.Close(fd)
		return errors.New("openat2 works in this process, and kubelet's cgroup library would refuse the partition's usage files bound over the root cgroup's (its Node would report a usage of 0): " +
			"the unit's SystemCallFilter=~openat2 is not in effect (a libseccomp older than 2.5.0 does not know openat2, and systemd then ignores the name); upgrade libseccomp to 2.5.0 or later and restart the kubelet")
	default:
		return fmt.Errorf("openat2 of /: %w (want ENOSYS, from the unit's SystemCallFilter=~openat2)", err)
	}
}
