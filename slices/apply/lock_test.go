package apply

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
)

func TestLock(t *testing.T) {
	root := t.TempDir()
	l, err := AcquireLock(root)
	applytest.Must(t, err)
	_, err = AcquireLock(root)
	var le *LockedError
	if !errors.As(err, &le) || !strings.HasPrefix(le.Holder, fmt.Sprintf("pid %d: ", os.Getpid())) {
		t.Fatalf("second lock: %v; want a LockedError naming pid %d", err, os.Getpid())
	}
	applytest.Must(t, l.Release())
	l, err = AcquireLock(root)
	applytest.Must(t, err)
	applytest.Must(t, l.Release())
}
