package apply

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
)

// Lock is the exclusive lock that keeps applies and removes from
// interleaving.
type Lock = fsutil.Lock

// LockedError says who holds the lock.
type LockedError struct {
	Path   string
	Holder string // "pid 1234: numa-partition apply", as the holder wrote it
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("another numa-partition is changing this host (%s holds %s); wait for it to finish", e.Holder, e.Path)
}

// AcquireLock takes root/run/numa-partition/apply.lock without waiting and
// writes the holder's PID and command line into it.
func AcquireLock(root string) (*Lock, error) {
	r := host.Root(root)
	p := r.Path(transaction.LockPath)
	if err := r.MkdirAll(path.Dir(transaction.LockPath), 0o755); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	l, err := r.TryLock(transaction.LockPath, 0o644, fmt.Sprintf("pid %d: %s", os.Getpid(), strings.Join(os.Args, " ")))
	var locked *fsutil.LockedError
	if errors.As(err, &locked) {
		h := locked.Holder
		if h == "" {
			h = "an unknown process"
		}
		return nil, &LockedError{Path: p, Holder: h}
	}
	return l, err
}
