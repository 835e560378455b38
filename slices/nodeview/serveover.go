package nodeview

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// MeminfoTarget is the file the meminfo view is served over, relative to
// the host's root.
const MeminfoTarget = "proc/meminfo"

// ServeOver serves render's file live over target (relative to root), a
// read-only bind in the calling process's mount namespace, and leaves no
// other mount: the FUSE filesystem is mounted at a fresh directory below
// root's run/, its file bound over target, then the directory's mount is
// detached and the directory removed. The bind keeps the filesystem, so
// the returned server serves reads of target until it is closed (or the
// process ends): a reader then gets an error, never a stale file.
//
// The partition's holder calls it for /proc/meminfo inside the namespace
// it holds (`numa-partition view hold`), so the view lives and dies with
// the namespace, as LXCFS's does with a container's.
func ServeOver(root fsutil.Root, target string, render Render) (*fuse.Server, error) {
	dir, err := os.MkdirTemp(root.Path("run"), "numa-partition-view-")
	if err != nil {
		return nil, fmt.Errorf("a directory to mount the view at: %w", err)
	}
	defer os.Remove(dir)
	srv, err := Serve(dir, render)
	if err != nil {
		if _, serr := os.Stat("/dev/fuse"); serr != nil {
			err = fmt.Errorf("%w (no /dev/fuse: load the kernel's fuse module, modprobe fuse)", err)
		}
		return nil, err
	}
	rel := path.Join("run", filepath.Base(dir), MeminfoFile)
	done, err := Mount(root, []Bind{{Source: rel, Target: target}})
	if err == nil && done[0].Skipped != "" {
		err = fmt.Errorf("binding %s over %s: %s", root.Path(rel), root.Path(target), done[0].Skipped)
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
