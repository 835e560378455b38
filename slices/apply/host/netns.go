package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/slices/bundle"
	pnetns "github.com/numa-partition/numa-partition/slices/netns"
)

// Dialer returns a dial function for TCP endpoints of the host at root:
// the ordinary one for "/", else one that creates its sockets in the
// network namespace of root's PID 1 (a sandbox's or a container's), so that
// status checks the kubelets where they listen.
func Dialer(root string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	if filepath.Clean(root) == "/" {
		return d.DialContext
	}
	return DialerIn(root, RootNetns(root))
}

// RootNetns is the network namespace of the host at root, relative to
// root: this process's for "/", else that of root's PID 1 (a sandbox's or
// a container's).
func RootNetns(root string) string {
	if filepath.Clean(root) == "/" {
		return "proc/self/ns/net"
	}
	return "proc/1/ns/net"
}

// openNetns opens the network namespace file rel below root without
// leaving root. A /proc/PID/ns/ entry is a magic link into the kernel's
// namespaces, followed only when its directory is a real procfs (there
// the kernel, not the root's owner, made the link: a proc/1/ns/net linked
// to this host's /proc/1/ns/net is refused). Anything else (run/netns/X,
// a bind mount of a namespace) is opened through fsutil.Root, a link at
// it not followed.
func openNetns(root, rel string) (*os.File, error) {
	r := Root(root)
	var f *os.File
	if strings.HasPrefix(path.Clean("/"+rel), "/proc/") {
		dir, err := r.OpenDir(path.Dir(path.Clean("/" + rel)))
		if err != nil {
			return nil, err
		}
		defer dir.Close()
		var st unix.Statfs_t
		if err := unix.Fstatfs(int(dir.Fd()), &st); err != nil {
			return nil, fmt.Errorf("statfs %s: %w", dir.Name(), err)
		}
		if st.Type != unix.PROC_SUPER_MAGIC {
			return nil, fmt.Errorf("%s is not on a procfs (fs type %#x): refusing to follow its namespace links", dir.Name(), st.Type)
		}
		fd, err := unix.Openat(int(dir.Fd()), path.Base(rel), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: r.Path(rel), Err: err}
		}
		f = os.NewFile(uintptr(fd), r.Path(rel))
	} else {
		var err error
		if f, err = r.Open(rel, os.O_RDONLY, 0); err != nil {
			return nil, err
		}
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil || st.Type != unix.NSFS_MAGIC {
		f.Close()
		return nil, fmt.Errorf("%s is not a namespace (fs type %#x, %v)", f.Name(), st.Type, err)
	}
	return f, nil
}

// RootNetnsHandle is root's network namespace as a netns handle.
func RootNetnsHandle(root string) (netns.NsHandle, error) {
	f, err := openNetns(root, RootNetns(root))
	if err != nil {
		return netns.None(), err
	}
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return netns.None(), fmt.Errorf("dup %s: %w", f.Name(), err)
	}
	unix.CloseOnExec(fd)
	return netns.NsHandle(fd), nil
}

// DialerIn dials from the network namespace rel below root (a
// partition's run/netns/<name>, where its kubelet listens on 127.0.0.1).
func DialerIn(root, rel string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (c net.Conn, err error) {
		nsErr := InNetns(root, rel, func() { c, err = d.DialContext(ctx, network, addr) })
		if nsErr != nil {
			return nil, nsErr
		}
		return c, err
	}
}

// InNetns runs f on a thread of its own in the network namespace rel
// below root: sockets are created in whatever namespace their thread is
// in. The thread goes back to the runtime only once it is back in its
// own namespace, else it dies with its goroutine.
func InNetns(root, rel string, f func()) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			done <- err
			return
		}
		defer self.Close()
		target, err := openNetns(root, rel)
		if err != nil {
			done <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("entering the network namespace of %s: %w", target.Name(), err)
			return
		}
		f()
		if unix.Setns(int(self.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- nil
	}()
	return <-done
}

// NetnsHost is the pnetns.Host of the partitions' named namespaces below
// root (run/netns), with ns as the host's namespace (netns.None() to only
// read). The directory is resolved once, inside the root, and reached
// through its descriptor (/proc/self/fd/N) from then on: a link on the
// way cannot lead a statfs, an unmount or a removal out of the root, and
// a link at a namespace's own name is refused by the package. A root
// without the directory, or with a file there (#38: no namespace can be
// made below it, and remove stopped at it, leaving the bridge), gives a
// Host that finds no namespace. done closes the directory; the Host must
// not be used after it.
func NetnsHost(root string, ns netns.NsHandle) (h *pnetns.Host, done func(), err error) {
	d, err := Root(root).OpenDir(strings.TrimPrefix(bundle.NetnsDir, "/"))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
		return &pnetns.Host{NS: ns}, func() {}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("opening %s: %w", filepath.Join(root, bundle.NetnsDir), err)
	}
	return &pnetns.Host{Dir: fmt.Sprintf("/proc/self/fd/%d", d.Fd()), NS: ns}, func() { d.Close() }, nil
}
