// Package hostfacts answers the planner's questions about the host beyond
// its sysfs topology (planner.HostFacts): the filesystem under each
// kubelet root dir, read with statfs as cadvisor reads it, and the pid
// limit, read from procfs as kubelet reads it. (planner.FixedFacts
// declares them instead.)
package hostfacts

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/partition/planner"
)

// Host reads the running host.
type Host struct {
	// Proc is procfs' mount point, "/proc" on a real host.
	Proc string
}

// Live is the running host.
var Live = Host{Proc: "/proc"}

// Filesystem statfs's dir, or its nearest existing ancestor when dir does
// not exist yet (a root dir apply will create lands on that filesystem),
// and names it by its mount point.
func (h Host) Filesystem(dir string) (planner.Filesystem, error) {
	if !filepath.IsAbs(dir) {
		return planner.Filesystem{}, fmt.Errorf("%q is not an absolute path", dir)
	}
	path := filepath.Clean(dir)
	for {
		var st unix.Stat_t
		err := unix.Stat(path, &st)
		if err == nil {
			var sf unix.Statfs_t
			if err := unix.Statfs(path, &sf); err != nil {
				return planner.Filesystem{}, fmt.Errorf("statfs %s: %w", path, err)
			}
			mount, err := mountPoint(path, st.Dev)
			if err != nil {
				return planner.Filesystem{}, err
			}
			return planner.Filesystem{Path: mount, Device: uint64(st.Dev), CapacityBytes: uint64(sf.Frsize) * sf.Blocks}, nil
		}
		if !errors.Is(err, fs.ErrNotExist) || path == "/" {
			return planner.Filesystem{}, fmt.Errorf("stat %s: %w", path, err)
		}
		path = filepath.Dir(path)
	}
}

// mountPoint is the topmost ancestor of path on device dev: the
// filesystem's name in the plan, the same before and after apply creates
// the root dir below it.
func mountPoint(path string, dev uint64) (string, error) {
	for path != "/" {
		parent := filepath.Dir(path)
		var st unix.Stat_t
		if err := unix.Stat(parent, &st); err != nil {
			return "", fmt.Errorf("stat %s: %w", parent, err)
		}
		if uint64(st.Dev) != dev {
			break
		}
		path = parent
	}
	return path, nil
}

// TaskLimit is min(kernel.pid_max, kernel.threads-max), kubelet's pid
// capacity (pkg/kubelet/stats/pidlimit).
func (h Host) TaskLimit() (uint64, error) {
	var limit uint64
	for i, name := range []string{"pid_max", "threads-max"} {
		path := filepath.Join(h.Proc, "sys", "kernel", name)
		data, err := os.ReadFile(path)
		if err != nil {
			return 0, fmt.Errorf("reading the pid limit: %w", err)
		}
		n, err := strconv.ParseUint(strings.TrimSuffix(string(data), "\n"), 10, 64)
		if err != nil || n == 0 {
			return 0, fmt.Errorf("%s: %q is not a positive integer", path, strings.TrimSpace(string(data)))
		}
		if i == 0 || n < limit {
			limit = n
		}
	}
	return limit, nil
}

// Interfaces lists the host's network interfaces and their IPv4
// addresses (those of the process's network namespace).
func (h Host) Interfaces() ([]planner.Interface, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("listing network interfaces: %w", err)
	}
	out := make([]planner.Interface, 0, len(ifaces))
	for _, i := range ifaces {
		pi := planner.Interface{Name: i.Name}
		addrs, err := i.Addrs()
		if err != nil {
			return nil, fmt.Errorf("addresses of %s: %w", i.Name, err)
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || ipn.IP.To4() == nil {
				continue
			}
			addr, _ := netip.AddrFromSlice(ipn.IP.To4())
			ones, _ := ipn.Mask.Size()
			pi.Addresses = append(pi.Addresses, netip.PrefixFrom(addr, ones))
		}
		out = append(out, pi)
	}
	return out, nil
}
