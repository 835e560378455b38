package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
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

// TryLock takes an exclusive flock on path without waiting, creating the
// file with perm. A non-empty holder (who holds it, for the next one to
// be told) replaces the file's content.
func TryLock(path string, perm fs.FileMode, holder string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, perm)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &LockedError{Path: path, Holder: strings.TrimSpace(string(b))}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if holder != "" {
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(holder+"\n"), 0)
		}
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up, emptying the holder it wrote.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close() // closing drops the flock
	l.f = nil
	return err
}
