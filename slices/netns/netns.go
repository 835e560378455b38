// Package netns builds, inspects and removes the network objects that make
// each partition a machine of its own to the cluster: a named network
// namespace per partition (as `ip netns add` names them), the link that
// joins it to the host's network (a veth on a host bridge, or a macvlan on a
// NIC), its address and default route, and on the host the bridge, its
// address, IPv4 forwarding and the NAT that a bridge uplink may need.
//
// Every call is idempotent and converges: Up on a half-built partition (a
// killed oneshot) finishes it, Down on a partly removed one removes the
// rest, and neither fails on what is already as asked. The package knows
// nothing about plans or units: the rendered oneshots call it through
// `numa-partition network`, with everything on their command lines.
package netns

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// DefaultDir is where iproute2 and systemd's NetworkNamespacePath= users
// keep named namespaces.
const DefaultDir = "/run/netns"

// Host is the network namespace that holds the uplink (bridge, NAT, the
// host ends of the links) and the directory of the named namespaces.
type Host struct {
	// Dir is the directory of the named namespaces. A caller confined to
	// a root passes it opened through the root (/proc/self/fd/N), so that
	// no link on the way leads out; "" is a host without the directory,
	// where no namespace is found. A link at a namespace's own name is
	// refused, never followed.
	Dir string
	// NS is the host's namespace; every netlink and nftables socket of
	// this package is opened in it or in a partition's, never in whatever
	// namespace the calling thread happens to be in.
	NS netns.NsHandle
}

// Live is the namespace of the calling process, with DefaultDir.
func Live() (*Host, error) {
	ns, err := netns.GetFromPath("/proc/self/ns/net")
	if err != nil {
		return nil, fmt.Errorf("opening this process's network namespace: %w", err)
	}
	return &Host{Dir: DefaultDir, NS: ns}, nil
}

// Close releases the host namespace's handle.
func (h *Host) Close() error { return h.NS.Close() }

// Uplink is how the partitions reach the host's network.
type Uplink struct {
	// Kind is KindBridge or KindMacvlan.
	Kind string
	// Bridge is the host bridge (bridge uplink) and HostAddress its
	// address: the partitions' gateway.
	Bridge      string
	HostAddress netip.Prefix
	// NAT, when valid, masquerades traffic from this prefix that leaves
	// the host through another interface than the bridge.
	NAT netip.Prefix
	// Parent is the NIC the macvlans sit on (macvlan uplink).
	Parent string
	// MTU of the bridge and links; 0 follows the uplink (the parent's,
	// or for a bridge the MTU of the interface of the host's default
	// route).
	MTU int
}

// Uplink kinds.
const (
	KindBridge  = "bridge"
	KindMacvlan = "macvlan"
)

// Partition is one partition's namespace and link.
type Partition struct {
	// Namespace is the name under Host.Dir.
	Namespace string
	// HostLink is the host end of the veth (bridge), or the macvlan's name
	// while it is created on the host, before it moves into the namespace.
	HostLink string
	// Interface is the link's name inside the namespace ("eth0").
	Interface string
	Address   netip.Prefix
	// Gateway is the default route; invalid for none.
	Gateway netip.Addr
	// Devices are interfaces of the host that the namespace holds while
	// it exists (NICs by NUMA locality): moved in by UpPartition, back to
	// the host's namespace by DownPartition, by name.
	Devices []string
}

// path is the namespace's bind mount; "" (which no call finds) without
// a directory.
func (h *Host) path(name string) string {
	if h.Dir == "" {
		return ""
	}
	return filepath.Join(h.Dir, name)
}

// nsfsMagic is the file system of a namespace file (NSFS_MAGIC).
const nsfsMagic = 0x6e736673

// isNamespace reports whether path is a mounted namespace (an empty file
// left by a create that was killed before its bind mount is not).
func isNamespace(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return false, fmt.Errorf("%s is a symbolic link: refusing to follow it", path)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("statfs %s: %w", path, err)
	}
	return st.Type == nsfsMagic, nil
}

// ensureNamespace creates the named namespace unless it exists. The
// mount directory is made a shared mount of its own first, as iproute2
// does, so that the namespace is visible in the mount namespaces systemd
// makes for units (containerd's BindPaths=) whenever it is created.
func (h *Host) ensureNamespace(name string) error {
	p := h.path(name)
	ok, err := isNamespace(p)
	if err != nil || ok {
		return err
	}
	if err := h.sharedDir(); err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the unmounted %s left by an earlier run: %w", p, err)
	}
	done := make(chan error, 1)
	go func() {
		// This thread ends up in the new namespace: it is never handed
		// back to the runtime (no UnlockOSThread), so it dies with the
		// goroutine.
		runtime.LockOSThread()
		done <- h.createOnThisThread(p)
	}()
	return <-done
}

func (h *Host) createOnThisThread(p string) error {
	if err := unix.Setns(int(h.NS), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("entering the host network namespace: %w", err)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o444)
	if err != nil {
		return fmt.Errorf("creating %s: %w", p, err)
	}
	f.Close()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		os.Remove(p)
		return fmt.Errorf("creating a network namespace: %w", err)
	}
	if err := unix.Mount("/proc/thread-self/ns/net", p, "", unix.MS_BIND, ""); err != nil {
		os.Remove(p)
		return fmt.Errorf("mounting the network namespace at %s: %w", p, err)
	}
	return nil
}

// sharedDir makes Dir a shared mount of its own (`ip netns add`'s
// `mount --make-shared` on a bind of itself), once.
func (h *Host) sharedDir() error {
	if err := os.MkdirAll(h.Dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", h.Dir, err)
	}
	if err := unix.Mount("", h.Dir, "none", unix.MS_SHARED|unix.MS_REC, ""); err == nil {
		return nil
	}
	if err := unix.Mount(h.Dir, h.Dir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind-mounting %s on itself: %w", h.Dir, err)
	}
	if err := unix.Mount("", h.Dir, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("making %s a shared mount: %w", h.Dir, err)
	}
	return nil
}

// openNamespace opens the named namespace.
func (h *Host) openNamespace(name string) (netns.NsHandle, error) {
	// O_NOFOLLOW: isNamespace refused a link there, and one made since
	// is not followed either.
	fd, err := unix.Open(h.path(name), unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return netns.None(), fmt.Errorf("opening network namespace %s: %w", h.path(name), err)
	}
	return netns.NsHandle(fd), nil
}

// deleteNamespace unmounts and removes the named namespace; the kernel
// frees it (and the links in it) once no process is left inside.
func (h *Host) deleteNamespace(name string) error {
	p := h.path(name)
	ok, err := isNamespace(p)
	if err != nil {
		return err
	}
	if ok {
		if err := unix.Unmount(p, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil {
			return fmt.Errorf("unmounting %s: %w", p, err)
		}
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", p, err)
	}
	return nil
}

// routeHandle is a netlink handle in ns for rtnetlink only: the default
// also opens XFRM sockets, which fail ("protocol not supported") on
// kernels without the xfrm module.
func routeHandle(ns netns.NsHandle) (*netlink.Handle, error) {
	return netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
}

// StaleEntries lists the names of the files in the directory that are no
// mounted namespace: mount points whose namespace went with the mount
// namespace it was mounted in (the pod sandboxes' cni-* of a partition's
// containerd, once its mount namespace's holder stopped) or that a killed
// run left. They name nothing: removing them is safe whoever made them.
func (h *Host) StaleEntries() ([]string, error) {
	if h.Dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(h.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", h.Dir, err)
	}
	var stale []string
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		ok, err := isNamespace(h.path(e.Name()))
		if err != nil {
			return nil, err
		}
		if !ok {
			stale = append(stale, e.Name())
		}
	}
	return stale, nil
}
