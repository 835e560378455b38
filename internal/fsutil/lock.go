package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrLocked says another process holds a lock.
var ErrLocked = errors.New("held by another process")

// Lock is an exclusive flock on a file. The kernel drops a flock when its
// holder dies, SIGKILL included, so a crash never leaves a lock behind.
type Lock struct{ f *os.File }

// LockedError is TryLock's answer when another process holds the lock:
// Holder is what that process wrote into the file ("" if nothing).
type LockedError struct {
	Path   string
	Holder string
}

func (e *LockedError) Error() string { return fmt.Sprintf("lock %s: %v", e.Path, ErrLocked) }

// Unwrap makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Unwrap() error { return ErrLocked }

// maxHolder bounds what is read of a holder's note: a PID and a command
// line; a lock file someone filled is not read whole.
const maxHolder = 4096

// TryLock is Root.TryLock of path's name in its directory.
func TryLock(path string, perm fs.FileMode, holder string) (*Lock, error) {
	return NewRoot(filepath.Dir(path)).TryLock(filepath.Base(path), perm, holder)
}

// TryLock takes an exclusive flock on rel without waiting, creating the
// file with perm. The file must be a regular file with one name: not a
// link (not followed), not a FIFO or device (whose open or truncation
// would block or destroy), not a hard link to a file elsewhere (the
// holder note truncates it). A non-empty holder (who holds it, for the
// next one to be told) replaces the file's content.
func (r Root) TryLock(rel string, perm fs.FileMode, holder string) (*Lock, error) {
	f, err := r.Open(rel, os.O_RDWR|os.O_CREATE, perm)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, fmt.Errorf("lock: %w", &NotRegularError{Path: f.Name(), Mode: fileType(st.Mode)})
	}
	if st.Nlink != 1 {
		f.Close()
		return nil, fmt.Errorf("lock %s: the file has %d hard links, refusing to write into it (it must be numa-partition's own file; remove it)", f.Name(), st.Nlink)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			b := make([]byte, maxHolder)
			n, _ := f.ReadAt(b, 0) // the holder note is a courtesy: EOF or a short read is fine
			return nil, &LockedError{Path: f.Name(), Holder: strings.TrimSpace(string(b[:n]))}
		}
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	if holder != "" {
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(holder+"\n"), 0) // a courtesy for the next one; the flock is what locks
		}
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up, emptying the holder it wrote.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0) // the holder note only; the close below is what unlocks
	err := l.f.Close()  // closing drops the flock
	l.f = nil
	return err
}
