package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --root's system bus is reached inside the root: a
// ROOT/run/dbus/system_bus_socket linked to another bus (this host's own)
// would have apply drive another systemd than root's.
func TestRootBusStaysInsideTheRoot(t *testing.T) {
	listen := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
	}
	dial := func(root string) error {
		addr, done, err := rootBus(root)
		if err != nil {
			return err
		}
		defer done()
		c, err := net.Dial("unix", strings.TrimPrefix(addr, "unix:path="))
		if err == nil {
			c.Close()
		}
		return err
	}
	outside := filepath.Join(t.TempDir(), "bus")
	listen(outside)

	root := t.TempDir()
	listen(filepath.Join(root, "run/dbus/system_bus_socket"))
	if err := dial(root); err != nil {
		t.Fatalf("the root's own bus: %v", err)
	}

	linked := t.TempDir()
	sock := filepath.Join(linked, "run/dbus/system_bus_socket")
	if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, sock); err != nil {
		t.Fatal(err)
	}
	if err := dial(linked); err == nil || !strings.Contains(err.Error(), sock+" is a symbolic link") {
		t.Errorf("the bus a link out of the root: %v; want refused, naming %s", err, sock)
	}

	dirLinked := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dirLinked, "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(dirLinked, "run/dbus")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(outside, filepath.Join(filepath.Dir(outside), "system_bus_socket")); err != nil {
		t.Fatal(err)
	}
	if err := dial(dirLinked); err == nil {
		t.Error("the bus's directory a link out of the root: connected to the bus outside")
	}
}
