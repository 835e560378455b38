package nodeview

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// Mounted says what Mount did with one bind.
type Mounted struct {
	Bind
	// Skipped is why the bind was not made ("" when it was): an end
	// that does not exist on this host.
	Skipped string
}

// Mount makes each bind below root, read-only, in the calling process's
// mount namespace: the partition's, where the holder (`numa-partition
// view hold`) runs. A bind whose source or target does not exist is skipped (and
// reported); any other failure stops and is returned, naming the bind.
// Nothing is undone then: the command fails the holder's unit, and the
// namespace, with the binds made so far, ends with it before containerd
// or kubelet has joined it.
// Neither end is reached through a symbolic link in its last component,
// and every other component is resolved inside root.
func Mount(root fsutil.Root, binds []Bind) ([]Mounted, error) {
	out := make([]Mounted, 0, len(binds))
	for _, b := range binds {
		skipped, err := mountOne(root, b)
		if err != nil {
			return out, fmt.Errorf("binding %s over %s: %w", root.Path(b.Source), root.Path(b.Target), err)
		}
		out = append(out, Mounted{Bind: b, Skipped: skipped})
	}
	return out, nil
}

// mountOne binds b.Source over b.Target through their O_PATH descriptors
// (/proc/self/fd/N: the files opened, not their paths resolved again),
// then makes the new mount read-only.
func mountOne(root fsutil.Root, b Bind) (skipped string, err error) {
	src, err := openEnd(root, b.Source)
	if errors.Is(err, fs.ErrNotExist) {
		return "no " + root.Path(b.Source), nil
	}
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := openEnd(root, b.Target)
	if errors.Is(err, fs.ErrNotExist) {
		return "no " + root.Path(b.Target), nil
	}
	if err != nil {
		return "", err
	}
	defer dst.Close()
	return "", bindOver(root, src, dst, b.Target)
}

// bindOver binds src over dst, rel below root (O_PATH descriptors of
// the same type, openOf), through the descriptors (/proc/self/fd/N: the
// files opened, not their paths resolved again), a directory with the
// mounts below it, then makes the new mount read-only.
func bindOver(root fsutil.Root, src, dst *os.File, rel string) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(dst.Fd()), &st); err != nil {
		return fmt.Errorf("stat %s: %w", root.Path(rel), err)
	}
	kind := st.Mode & unix.S_IFMT
	flags := uintptr(unix.MS_BIND)
	if kind == unix.S_IFDIR {
		flags |= unix.MS_REC
	}
	if err := unix.Mount(fdPath(src.Fd()), fdPath(dst.Fd()), "", flags, ""); err != nil {
		return fmt.Errorf("bind mount: %w", err)
	}
	// dst is the file the bind now covers; the new mount is reached
	// through the path again.
	top, err := openOf(root, rel, kind)
	if err != nil {
		return fmt.Errorf("after the bind: %w", err)
	}
	defer top.Close()
	if err := unix.Mount("", fdPath(top.Fd()), "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("making the bind read-only: %w", err)
	}
	return nil
}

// openEnd opens one end of a bind as an O_PATH descriptor of a regular
// file (openOf).
func openEnd(root fsutil.Root, rel string) (*os.File, error) {
	return openOf(root, rel, unix.S_IFREG)
}

// openDir opens rel as an O_PATH descriptor of a directory (openOf).
func openDir(root fsutil.Root, rel string) (*os.File, error) {
	return openOf(root, rel, unix.S_IFDIR)
}

// openOf opens rel below root as an O_PATH descriptor of a file of type
// kind (unix.S_IFREG, unix.S_IFDIR): a link in its last component is
// refused, not followed (O_PATH with O_NOFOLLOW opens the link itself, so
// it is checked here).
func openOf(root fsutil.Root, rel string, kind uint32) (*os.File, error) {
	f, err := root.Open(rel, unix.O_PATH, 0)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %s: %w", root.Path(rel), err)
	}
	switch got := st.Mode & unix.S_IFMT; got {
	case kind:
		return f, nil
	case unix.S_IFLNK:
		f.Close()
		return nil, &fsutil.SymlinkError{Path: root.Path(rel), Root: root.Dir()}
	default:
		f.Close()
		return nil, fmt.Errorf("%s is not a %s (mode %#o)", root.Path(rel), map[uint32]string{unix.S_IFREG: "regular file", unix.S_IFDIR: "directory"}[kind], got)
	}
}

func fdPath(fd uintptr) string { return "/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10) }
