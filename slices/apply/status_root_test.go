package apply

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/internal/hostiletest"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/status"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// offlineStatus reads root's status offline, as `status --root` does for
// a root no systemd runs on.
func offlineStatus(root string) (*status.Status, error) {
	return status.Read(context.Background(), status.Options{Root: root, Sysfs: filepath.Join(root, "sys"),
		Systemd: systemd.NewOffline(root), Offline: true, NoAPI: true})
}

// #38 item 9: a socket at a rendered path made status exit 2 ("no such
// device or address", from open(2)) where a FIFO there was drift. Both
// are drift now, said the same way, and remove keeps both.
func TestSocketAtARenderedPathIsDriftAsAFIFOIs(t *testing.T) {
	root, err := os.MkdirTemp("", "np") // short: a socket's path has 108 bytes
	applytest.Must(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	fifo, sock := "etc/systemd/system/f.service", "etc/systemd/system/s.service"
	rec := &record.Record{Generation: 1, CgroupMode: transaction.CgroupV2, Files: []record.File{{Path: fifo, SHA256: record.Hash(nil)}, {Path: sock, SHA256: record.Hash(nil)}}}
	b, err := rec.Marshal()
	applytest.Must(t, err)
	applytest.Must(t, os.MkdirAll(filepath.Join(root, filepath.Dir(record.Path)), 0o755))
	applytest.Must(t, os.WriteFile(filepath.Join(root, record.Path), b, 0o644))
	applytest.Must(t, os.MkdirAll(filepath.Join(root, "etc/systemd/system"), 0o755))
	hostiletest.FIFO(t, filepath.Join(root, fifo))
	l, err := net.Listen("unix", filepath.Join(root, sock))
	applytest.Must(t, err)
	defer l.Close()

	st, err := offlineStatus(root)
	if err != nil {
		t.Fatalf("status with a socket at a rendered path: %v; want drift", err)
	}
	for _, want := range []string{"/" + fifo + " was replaced: ", "/" + sock + " was replaced: "} {
		if !slices.ContainsFunc(st.Drift, func(d string) bool { return strings.HasPrefix(d, want) && strings.Contains(d, "is not a regular file") }) {
			t.Errorf("no drift %q…is not a regular file in %q", want, st.Drift)
		}
	}
	kept, err := transaction.KeptReason(root, rec.Files[1])
	if err != nil || !strings.Contains(kept, "a socket") {
		t.Errorf("remove's check of the socket: %q, %v; want it kept as replaced by a socket", kept, err)
	}
}

// #38 item 9: status --root /nonexistent said NOT-APPLIED; a root that is
// not a directory is an error naming it.
func TestStatusOfARootThatIsNoDirectoryIsAnError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	applytest.Must(t, os.WriteFile(file, nil, 0o644))
	for _, root := range []string{filepath.Join(t.TempDir(), "nonexistent"), file} {
		st, err := offlineStatus(root)
		if err == nil || !strings.Contains(err.Error(), root) {
			t.Errorf("status --root %s: %+v, %v; want an error naming the root", root, st, err)
		}
	}
}
