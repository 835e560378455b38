package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

func sortEntries(e []fs.DirEntry) {
	slices.SortFunc(e, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}

// split is rel's directory (relative to the root) and last component; a
// root itself has no last component to write or remove.
func (r Root) split(rel string) (dir, base string, err error) {
	c := clean(rel)
	if c == "." {
		return "", "", &os.PathError{Op: "write", Path: r.dir, Err: errors.New("the root itself is not a file")}
	}
	return path.Dir(c), path.Base(c), nil
}

// openDir opens the directory rel for *at calls and fsync.
func (r Root) openDir(rel string) (int, error) {
	return r.openat2(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
}

// MkdirAll makes rel and its missing parents with perm, each made with
// mkdirat in its parent resolved inside the root (a symlink on the way is
// followed inside the root, never out of it).
func (r Root) MkdirAll(rel string, perm fs.FileMode) error {
	c := clean(rel)
	if c == "." {
		return nil
	}
	parts := strings.Split(c, "/")
	for i := range parts {
		prefix := path.Join(parts[:i+1]...)
		fd, err := r.openat2(prefix, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err == nil {
			unix.Close(fd)
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("making directory %s: %w", r.Path(c), err)
		}
		pfd, err := r.openat2(path.Join(append([]string{"."}, parts[:i]...)...), unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return fmt.Errorf("making directory %s: %w", r.Path(c), err)
		}
		err = unix.Mkdirat(pfd, parts[i], uint32(perm.Perm()))
		unix.Close(pfd)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("making directory %s: %w", r.Path(c), &os.PathError{Op: "mkdir", Path: r.Path(prefix), Err: err})
		}
		// EEXIST is a racing mkdir, or a dangling symlink: the open says.
		fd, err = r.openat2(prefix, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return fmt.Errorf("making directory %s: %s is in the way: %w", r.Path(c), r.Path(prefix), err)
		}
		unix.Close(fd)
	}
	return nil
}

// WriteFile replaces rel with content so that a reader, or a crash, sees
// the old file or the new one, never a mix: a temporary file (TempPattern)
// in the same directory, fsync, rename, fsync of the directory. Missing
// directories are made (0755). The rename replaces whatever is at rel,
// a symbolic link included, without following it.
func (r Root) WriteFile(rel string, content []byte, mode fs.FileMode) error {
	dir, base, err := r.split(rel)
	if err != nil {
		return err
	}
	if err := r.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dfd, err := r.openDir(dir)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	tmp, f, err := r.createTemp(dfd, dir, base)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			_ = unix.Unlinkat(dfd, tmp, 0) // best effort: the write already failed
		}
	}()
	if _, err := f.Write(content); err != nil {
		return fmt.Errorf("writing %s: %w", f.Name(), err)
	}
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", f.Name(), err)
	}
	if err := unix.Renameat(dfd, tmp, dfd, base); err != nil {
		return &os.LinkError{Op: "rename", Old: f.Name(), New: r.Path(rel), Err: err}
	}
	ok = true
	return syncFd(dfd, r.Path(dir))
}

// createTemp makes a new file named by TempPattern(base) in the directory
// dfd (O_EXCL: never an existing file or a link planted under that name).
func (r Root) createTemp(dfd int, dir, base string) (string, *os.File, error) {
	prefix := strings.TrimSuffix(TempPattern(base), "*")
	for range 100 {
		name := prefix + strconv.FormatUint(uint64(rand.Uint32()), 10)
		fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return "", nil, &os.PathError{Op: "create", Path: r.Path(path.Join(dir, name)), Err: err}
		}
		return name, os.NewFile(uintptr(fd), r.Path(path.Join(dir, name))), nil
	}
	return "", nil, fmt.Errorf("creating a temporary file for %s: 100 names taken", r.Path(path.Join(dir, base)))
}

// syncFd makes a directory's entries durable (a rename, a removal).
// Filesystems that cannot sync a directory are not an error.
func syncFd(fd int, name string) error {
	if err := unix.Fsync(fd); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("fsync %s: %w", name, err)
	}
	return nil
}

// Remove removes the file, link or empty directory rel (a link itself,
// never what it points to) and syncs its directory, as os.Remove does:
// a missing rel is an error satisfying errors.Is(err, fs.ErrNotExist).
func (r Root) Remove(rel string) error {
	dir, base, err := r.split(rel)
	if err != nil {
		return err
	}
	dfd, err := r.openDir(dir)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	err = unix.Unlinkat(dfd, base, 0)
	if errors.Is(err, unix.EISDIR) {
		err = unix.Unlinkat(dfd, base, unix.AT_REMOVEDIR)
	}
	if err != nil {
		return &os.PathError{Op: "remove", Path: r.Path(rel), Err: err}
	}
	return syncFd(dfd, r.Path(dir))
}

// Rename moves from to to, both below the root (the last components are
// names in their directories, not followed).
func (r Root) Rename(from, to string) error {
	fdir, fbase, err := r.split(from)
	if err != nil {
		return err
	}
	tdir, tbase, err := r.split(to)
	if err != nil {
		return err
	}
	ffd, err := r.openDir(fdir)
	if err != nil {
		return err
	}
	defer unix.Close(ffd)
	tfd, err := r.openDir(tdir)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	if err := unix.Renameat(ffd, fbase, tfd, tbase); err != nil {
		return &os.LinkError{Op: "rename", Old: r.Path(from), New: r.Path(to), Err: err}
	}
	if err := syncFd(ffd, r.Path(fdir)); err != nil {
		return err
	}
	return syncFd(tfd, r.Path(tdir))
}

// SyncDir makes the entries of the directory rel durable.
func (r Root) SyncDir(rel string) error {
	fd, err := r.openDir(rel)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return syncFd(fd, r.Path(rel))
}

// Readlink is the text of the link rel (not followed).
func (r Root) Readlink(rel string) (string, error) {
	dir, base, err := r.split(rel)
	if err != nil {
		return "", err
	}
	dfd, err := r.openat2(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(dfd)
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dfd, base, buf)
	if err != nil {
		return "", &os.PathError{Op: "readlink", Path: r.Path(rel), Err: err}
	}
	return string(buf[:n]), nil
}
