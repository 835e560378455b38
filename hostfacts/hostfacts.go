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

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// Host reads the running host.
type Host struct {
	// Proc is procfs' mount point, "/proc" on a real host.
	Proc string
	// NetnsDir holds the named network namespaces; "" is /run/netns.
	NetnsDir string
	// Root is the root whose sys/fs/cgroup tells the cgroup mode; "" is
	// "/".
	Root string
	// Cgroup is the cgroup mode declared for Root (a root no systemd
	// runs on); "" reads it.
	Cgroup cgroupmode.Mode
}

// CgroupMode is how the host mounts cgroups (package cgroupmode).
func (h Host) CgroupMode() (cgroupmode.Mode, error) {
	if h.Cgroup != "" {
		return h.Cgroup, nil
	}
	root := h.Root
	if root == "" {
		root = "/"
	}
	return cgroupmode.Detect(fsutil.NewRoot(root))
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

// maxProcValue bounds a /proc/sys value: one decimal number.
const maxProcValue = 64

// TaskLimit is min(kernel.pid_max, kernel.threads-max), kubelet's pid
// capacity (pkg/kubelet/stats/pidlimit).
func (h Host) TaskLimit() (uint64, error) {
	var limit uint64
	for i, name := range []string{"pid_max", "threads-max"} {
		path := filepath.Join(h.Proc, "sys", "kernel", name)
		data, err := fsutil.ReadFileBounded(path, maxProcValue)
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

// Interfaces lists the network interfaces of this process's network
// namespace, with their IPv4 addresses, the PCI function each is a netdev
// of and which holds an IPv4 or IPv6 default route, and those of the named
// namespaces in NetnsDir (with their namespace): sysfs shows a PCI
// function's interface only in the namespace that holds it, so the plan
// learns here where a partition's devices are while it runs. The PCI
// function comes from IFLA_PARENT_DEV_NAME (Linux 5.15 and later).
func (h Host) Interfaces() ([]planner.Interface, error) {
	out, err := interfacesIn(netns.None(), "")
	if err != nil {
		return nil, err
	}
	dir := h.NetnsDir
	if dir == "" {
		dir = "/run/netns"
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		ns, err := netns.GetFromPath(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // an empty file a killed run or a gone pod left: no namespace
		}
		more, err := interfacesIn(ns, e.Name())
		ns.Close()
		if err != nil {
			continue // deleted while read: its devices are the host's again
		}
		out = append(out, more...)
	}
	return out, nil
}

// interfacesIn lists the interfaces of namespace ns (netns.None(): this
// process's), named name in their Namespace.
func interfacesIn(ns netns.NsHandle, name string) ([]planner.Interface, error) {
	where := "this namespace"
	var (
		nh  *netlink.Handle
		err error
	)
	if ns.IsOpen() {
		where = "network namespace " + name
		nh, err = netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	} else {
		nh, err = netlink.NewHandle(unix.NETLINK_ROUTE)
	}
	if err != nil {
		return nil, fmt.Errorf("netlink in %s: %w", where, err)
	}
	defer nh.Close()
	links, err := nh.LinkList()
	if err != nil {
		return nil, fmt.Errorf("listing the network interfaces of %s: %w", where, err)
	}
	routes, err := nh.RouteList(nil, unix.AF_INET)
	if err != nil {
		return nil, fmt.Errorf("listing the routes of %s: %w", where, err)
	}
	// An IPv6 default route carries the host's network as well (a
	// kernel without IPv6 has none).
	if v6, err := nh.RouteList(nil, unix.AF_INET6); err == nil {
		routes = append(routes, v6...)
	}
	defaultVia := map[int]bool{}
	for _, r := range routes {
		if r.Dst == nil || isZeroMask(r.Dst.Mask) {
			defaultVia[r.LinkIndex] = true
		}
	}
	out := make([]planner.Interface, 0, len(links))
	for _, l := range links {
		a := l.Attrs()
		pi := planner.Interface{Name: a.Name, Namespace: name, DefaultRoute: defaultVia[a.Index]}
		if a.ParentDevBus == "pci" {
			pi.PCI = a.ParentDev
		}
		addrs, err := nh.AddrList(l, unix.AF_INET)
		if errors.Is(err, unix.ENODEV) {
			continue // removed since the list: not the host's any more
		}
		if err != nil {
			return nil, fmt.Errorf("addresses of %s in %s: %w", a.Name, where, err)
		}
		for _, ad := range addrs {
			addr, ok := netip.AddrFromSlice(ad.IP.To4())
			if !ok {
				continue
			}
			ones, _ := ad.Mask.Size()
			pi.Addresses = append(pi.Addresses, netip.PrefixFrom(addr, ones))
		}
		out = append(out, pi)
	}
	return out, nil
}

func isZeroMask(m net.IPMask) bool {
	ones, _ := m.Size()
	return ones == 0
}
