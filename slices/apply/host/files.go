package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// What apply reads of the host is read through a bound (a file someone
// grew, or a FIFO or device put at its path, must not hang or bloat it).
const (
	// maxHostFile bounds a unit, drop-in or config at a path apply
	// writes: the rendered ones are a few KiB, and a foreign original at
	// one of those paths (kept for remove) has room to be hand-written.
	maxHostFile = 4 << 20
	// MaxCgroupFile bounds a cgroup file (cpuset.cpus, cgroup.procs):
	// cgroup.procs lists at most pid_max pids of 8 bytes.
	MaxCgroupFile = 32 << 20
)

// FileState is a file on disk.
type FileState struct {
	Content []byte
	Mode    fs.FileMode
}

// Root is the rooted view every file operation of apply goes through:
// nothing below --root follows a link out of it (fsutil.Root).
func Root(root string) fsutil.Root { return fsutil.NewRoot(root) }

// WriteFileAtomic replaces rel below root atomically and durably (fsutil).
func WriteFileAtomic(root, rel string, content []byte, mode fs.FileMode) error {
	return Root(root).WriteFile(rel, content, mode)
}

// RemoveFile removes rel below root (a missing file is fine) and syncs
// its directory.
func RemoveFile(root, rel string) error {
	err := Root(root).Remove(rel)
	if errors.Is(err, fs.ErrNotExist) {
		// Nothing to remove (an apply killed before it wrote the file),
		// or not even its directory.
		return nil
	}
	return err
}

// ReadFileState reads the regular file rel below root; ok is false when
// it does not exist. A link, FIFO, device or directory there is an error
// naming it: apply neither follows nor replaces what it did not expect.
func ReadFileState(root, rel string) (FileState, bool, error) {
	r := Root(root)
	f, err := r.Open(rel, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return FileState{}, false, nil
	}
	if err != nil {
		return FileState{}, false, notRegular(r, rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return FileState{}, false, err
	}
	b, err := fsutil.ReadBounded(f, r.Path(rel), maxHostFile)
	if err != nil {
		return FileState{}, false, err
	}
	return FileState{Content: b, Mode: fi.Mode().Perm()}, true, nil
}

// ReadFile reads the regular file rel below root, bounded as every
// file apply writes; what else is there is a *fsutil.NotRegularError (a
// socket too: notRegular).
func ReadFile(root, rel string) ([]byte, error) {
	r := Root(root)
	b, err := r.ReadFile(rel, maxHostFile)
	return b, notRegular(r, rel, err)
}

// notRegular is err, from opening rel below r, unless it is the ENXIO
// open(2) answers for a socket: then the *fsutil.NotRegularError a FIFO
// or a device there gives, so that a socket is what a FIFO is (#38:
// status exited 2 with "no such device or address" on a socket at a
// rendered path, and reported a FIFO there as drift).
func notRegular(r fsutil.Root, rel string, err error) error {
	if !errors.Is(err, unix.ENXIO) {
		return err
	}
	if fi, lerr := r.Lstat(rel); lerr == nil && !fi.Mode().IsRegular() {
		return &fsutil.NotRegularError{Path: r.Path(rel), Mode: fi.Mode()}
	}
	return err
}

// Exists says whether rel is there below root (a link counts as itself).
func Exists(root, rel string) bool {
	_, err := Root(root).Lstat(rel)
	return err == nil
}

// WriteKernelFile writes value into the existing kernel file rel below
// root (a cgroup's cpuset.cpus, cgroup.procs): one write(2), as the
// kernel takes it, into that file and not a link's target.
func WriteKernelFile(root, rel, value string) error {
	f, err := Root(root).Open(rel, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(value); err != nil {
		f.Close()
		return fmt.Errorf("writing %q to %s: %w", value, f.Name(), err)
	}
	return f.Close()
}

// IsReplaced says whether err, from reading a file apply wrote, means
// something apply did not write is at its path: a link, a FIFO, a device
// or directory, or a file grown past what apply writes.
func IsReplaced(err error) bool {
	var link *fsutil.SymlinkError
	var irregular *fsutil.NotRegularError
	return errors.As(err, &link) || errors.As(err, &irregular) || errors.Is(err, fsutil.ErrTooLarge)
}
