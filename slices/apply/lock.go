package apply

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Lock is the exclusive lock that keeps applies and removes from
// interleaving.
type Lock struct{ f *os.File }

// LockedError says who holds the lock.
type LockedError struct {
	Path   string
	Holder string // "pid 1234: numa-partition apply", as the holder wrote it
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("another numa-partition is changing this host (%s holds %s); wait for it to finish", e.Holder, e.Path)
}

// AcquireLock takes root/run/numa-partition/apply.lock without waiting and
// writes the holder's PID and command line into it. The kernel releases
// a flock when its holder dies, so a crash never leaves the host locked.
func AcquireLock(root string) (*Lock, error) {
	p := filepath.Join(root, LockPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(p)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			h := strings.TrimSpace(string(holder))
			if h == "" {
				h = "an unknown process"
			}
			return nil, &LockedError{Path: p, Holder: h}
		}
		return nil, fmt.Errorf("lock %s: %w", p, err)
	}
	who := fmt.Sprintf("pid %d: %s\n", os.Getpid(), strings.Join(os.Args, " "))
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(who), 0)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close() // closing drops the flock
	l.f = nil
	return err
}
