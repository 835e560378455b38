package apply

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestLock(t *testing.T) {
	root := t.TempDir()
	l, err := AcquireLock(root)
	must(t, err)
	_, err = AcquireLock(root)
	var le *LockedError
	if !errors.As(err, &le) || !strings.HasPrefix(le.Holder, fmt.Sprintf("pid %d: ", os.Getpid())) {
		t.Fatalf("second lock: %v; want a LockedError naming pid %d", err, os.Getpid())
	}
	must(t, l.Release())
	l, err = AcquireLock(root)
	must(t, err)
	must(t, l.Release())
}
