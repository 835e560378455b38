package nodeview

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// MeminfoTarget is the file the meminfo view is served over, relative to
// the host's root.
const MeminfoTarget = "proc/meminfo"

// ServeOver serves each render's file live over its target (the key,
// relative to root), a read-only bind in the calling process's mount
// namespace, and leaves no other mount: the FUSE filesystem is mounted at
// a fresh directory below root's run/, each file bound over its target,
// then the directory's mount is detached and the directory removed. The
// binds keep the filesystem, so the returned server serves reads of the
// targets until it is closed (or the process ends): a reader then gets an
// error, never a stale file. Every target must exist.
//
// The partition's holder calls it for /proc/meminfo, and on cgroup v1 the
// root memory cgroup's usage files, inside the namespace it holds (`numa-partition view hold`),
// so the view lives and dies with the namespace, as LXCFS's does with a
// container's.
func ServeOver(root fsutil.Root, targets map[string]Render) (*fuse.Server, error) {
	dir, err := os.MkdirTemp(root.Path("run"), "numa-partition-view-")
	if err != nil {
		return nil, fmt.Errorf("a directory to mount the view at: %w", err)
	}
	defer os.Remove(dir)
	// The files are named by their place among the sorted targets: two
	// targets may share a base name.
	order := slices.Sorted(maps.Keys(targets))
	files := map[string]Render{}
	binds := make([]Bind, len(order))
	for i, target := range order {
		name := strconv.Itoa(i)
		files[name] = targets[target]
		binds[i] = Bind{Source: path.Join("run", filepath.Base(dir), name), Target: target}
	}
	srv, err := Serve(dir, files)
	if err != nil {
		if _, serr := os.Stat("/dev/fuse"); serr != nil {
			err = fmt.Errorf("%w (no /dev/fuse: load the kernel's fuse module, modprobe fuse)", err)
		}
		return nil, err
	}
	done, err := Mount(root, binds)
	for _, m := range done {
		if err == nil && m.Skipped != "" {
			err = fmt.Errorf("binding %s over %s: %s", root.Path(m.Source), root.Path(m.Target), m.Skipped)
		}
	}
	if err != nil {
		return nil, closeServer(srv, dir, err)
	}
	if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
		return nil, closeServer(srv, dir, fmt.Errorf("detaching the view's own mount %s: %w", dir, err))
	}
	return srv, nil
}

// closeServer unmounts srv after a failure, and returns that failure.
func closeServer(srv *fuse.Server, dir string, err error) error {
	if uerr := srv.Unmount(); uerr != nil {
		return fmt.Errorf("%w (and unmounting %s: %v)", err, dir, uerr)
	}
	return err
}
