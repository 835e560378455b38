package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/hostiletest"
	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/bundle"
	pnetns "github.com/numa-partition/numa-partition/slices/netns"
)

// newOutsideMounted is hostiletest.NewOutside on a tmpfs mounted now: a
// sandbox's overlay of the host's / (booted before) does not show it, so
// whatever of it is seen below the sandbox's root came through a link
// out of it.
func newOutsideMounted(t testing.TB, content string) *hostiletest.Outside {
	t.Helper()
	dir := t.TempDir()
	applytest.Must(t, unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"))
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	return hostiletest.NewOutsideIn(t, dir, content)
}

// plant replaces rel below root by a link to target.
func plant(t testing.TB, root, rel, target string) {
	t.Helper()
	p := filepath.Join(root, rel)
	applytest.Must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	_ = os.Remove(p) // the previous case's link
	applytest.Must(t, os.Symlink(target, p))
}

// wantNamed fails t unless err is an error naming path.
func wantNamed(t testing.TB, what string, err error, path string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("%s: %v; want an error naming %s", what, err, path)
	}
}

// Repro (#24, item 1): with ROOT/run/numa-partition/apply.lock a link to a
// file outside, `apply --root` truncated that file to 0 bytes.
func TestLockThroughHostileLinkTruncatesNothingOutside(t *testing.T) {
	root := t.TempDir()
	o := hostiletest.NewOutside(t, "a file outside the root\n")
	for name, target := range hostiletest.LinksOut(t, root, filepath.Dir(transaction.LockPath), o.Canary) {
		plant(t, root, transaction.LockPath, target)
		err := hostiletest.Within(t, "lock via "+name, func() error {
			l, err := AcquireLock(root)
			if err == nil {
				l.Release()
			}
			return err
		})
		wantNamed(t, "lock via a link ("+name+")", err, filepath.Join(root, transaction.LockPath))
	}
	o.Check(t)
	// A FIFO at the lock's path (not a link) blocks nothing and is refused.
	applytest.Must(t, os.Remove(filepath.Join(root, transaction.LockPath)))
	hostiletest.FIFO(t, filepath.Join(root, transaction.LockPath))
	err := hostiletest.Within(t, "lock on a FIFO", func() error { _, err := AcquireLock(root); return err })
	wantNamed(t, "lock on a FIFO", err, filepath.Join(root, transaction.LockPath))
}

// The record is read and written by apply, status, remove and diff: a
// link at its path is refused (never read through), a FIFO does not
// block, and the record's directory linked out of the root is resolved
// inside the root.
func TestRecordThroughHostileLinkReadsNothingOutside(t *testing.T) {
	root := t.TempDir()
	o := hostiletest.NewOutside(t, `{"generation": 7, "files": [], "units": []}`)
	for name, target := range hostiletest.LinksOut(t, root, filepath.Dir(record.Path), o.Canary) {
		plant(t, root, record.Path, target)
		err := hostiletest.Within(t, "record via "+name, func() error { _, err := record.Read(root); return err })
		wantNamed(t, "record via a link ("+name+")", err, filepath.Join(root, record.Path))
	}
	applytest.Must(t, os.Remove(filepath.Join(root, record.Path)))
	// The record's directory is a link to the canary's: resolved in the root.
	applytest.Must(t, os.Remove(filepath.Join(root, filepath.Dir(record.Path))))
	plant(t, root, filepath.Dir(record.Path), o.Dir)
	applytest.Must(t, os.Rename(o.Canary, filepath.Join(o.Dir, "applied.json")))
	rec, err := record.Read(root)
	applytest.Must(t, os.Rename(filepath.Join(o.Dir, "applied.json"), o.Canary))
	if err != nil || rec != nil {
		t.Errorf("record through a linked directory: %+v, %v; want none (there is none inside the root)", rec, err)
	}
	o.Check(t)
}

// Repro (#24, item 2): `diff --root` printed files outside the root
// through a linked unit directory or etc/numa-partition, and a record
// naming "../.." paths had diff read (and remove delete) files outside.
func TestDiffThroughHostileLinksPrintsNothingOutside(t *testing.T) {
	f := applytest.NewFixture(1)
	f.Bundle.Files = append(f.Bundle.Files, bundle.File{Path: "etc/numa-partition/tnode0.conf", Mode: 0o644, Content: []byte("mine\n")})
	b, err := f.Typed()
	applytest.Must(t, err)
	secret := "SECRET outside the root\n"
	for _, dir := range []string{"etc/systemd/system", "etc/numa-partition"} {
		root := t.TempDir()
		o := hostiletest.NewOutside(t, secret)
		// The outside directory holds the files diff would compare.
		for _, name := range []string{"containerd-tnode0.service", "tnode0.conf"} {
			applytest.Must(t, os.WriteFile(filepath.Join(o.Dir, name), []byte(secret), 0o644))
		}
		for name, target := range hostiletest.LinksOut(t, root, filepath.Dir(dir), o.Canary) {
			if name == "device" || name == "fifo" {
				continue // a directory link: these are files
			}
			target = filepath.Dir(target) // the canary's directory
			if name == "dotdot" {
				target = strings.Repeat("../", 40) + strings.TrimPrefix(o.Dir, "/")
			}
			plant(t, root, dir, target)
			out, _, err := transaction.FileDiff(root, b, transaction.CgroupV2)
			if err != nil {
				t.Errorf("diff with %s linked out (%s): %v", dir, name, err)
			}
			if strings.Contains(out, "SECRET") {
				t.Errorf("diff with %s linked out (%s) printed the file outside:\n%s", dir, name, out)
			}
		}
		o.Check(t, "containerd-tnode0.service", "tnode0.conf")
	}
	// A unit file that is itself a link out: refused, naming it.
	root := t.TempDir()
	o := hostiletest.NewOutside(t, secret)
	unit := "etc/systemd/system/containerd-tnode0.service"
	for name, target := range hostiletest.LinksOut(t, root, filepath.Dir(unit), o.Canary) {
		plant(t, root, unit, target)
		out, _, err := within2(t, "diff via "+name, func() (string, bool, error) { return transaction.FileDiff(root, b, transaction.CgroupV2) })
		wantNamed(t, "diff with the unit a link ("+name+")", err, filepath.Join(root, unit))
		if strings.Contains(out, "SECRET") {
			t.Errorf("diff printed the file outside (%s)", name)
		}
	}
	applytest.Must(t, os.Remove(filepath.Join(root, unit)))
	// A record naming a path out of the root: refused, naming it, and
	// nothing read.
	rel, err := filepath.Rel(root, o.Canary)
	applytest.Must(t, err)
	writeRecord(t, root, &record.Record{Generation: 1, Files: []record.File{{Path: rel, SHA256: "x", Mode: 0o644}}})
	out, _, err := transaction.FileDiff(root, b, transaction.CgroupV2)
	wantNamed(t, "diff of a record naming "+rel, err, rel)
	if strings.Contains(out, "SECRET") {
		t.Errorf("diff of a record naming %s printed the file outside:\n%s", rel, out)
	}
	o.Check(t)
}

// writeRecord writes rec as root's record.
func writeRecord(t testing.TB, root string, rec *record.Record) {
	t.Helper()
	raw, err := rec.Marshal()
	applytest.Must(t, err)
	applytest.Must(t, os.MkdirAll(filepath.Join(root, filepath.Dir(record.Path)), 0o755))
	applytest.Must(t, os.WriteFile(filepath.Join(root, record.Path), raw, 0o644))
}

// Repro (#38, item 2, the record half): a record entry for etc/hostname,
// with that file's sha256, made remove delete the root's etc/hostname.
// A record lists only files apply writes (the bundle's: units and
// drop-ins, numa-partition's config dir, the config_path trees); any
// other entry is refused when the record is read, naming it, before
// remove (or apply, which deletes files no longer rendered) acts on it.
func TestRecordEntryOutsideWhatApplyWritesIsRefused(t *testing.T) {
	root := t.TempDir()
	hostname := filepath.Join(root, "etc/hostname")
	applytest.Must(t, os.MkdirAll(filepath.Dir(hostname), 0o755))
	applytest.Must(t, os.WriteFile(hostname, []byte("precious\n"), 0o644))
	for _, bad := range []string{"etc/hostname", "etc/systemd/system", "etc/systemd/user/x.service", "var/lib/numa-partition/applied.json",
		"var/lib/numa-partition/originals/etc/hostname", "../etc/hostname", "/etc/hostname", "etc/numa-partition/../hostname", ""} {
		writeRecord(t, root, &record.Record{Generation: 1, Files: []record.File{
			{Path: "etc/systemd/system/tnode0.slice", SHA256: record.Hash(nil), Mode: 0o644},
			{Path: bad, SHA256: record.Hash([]byte("precious\n")), Mode: 0o644},
		}})
		_, err := Remove(context.Background(), Options{Root: root})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("files[1] path %q", bad)) {
			t.Errorf("remove with a record entry %q: %v; want it refused, naming it", bad, err)
		}
		if b, err := os.ReadFile(hostname); err != nil || string(b) != "precious\n" {
			t.Fatalf("remove with a record entry %q took etc/hostname: %q %v", bad, b, err)
		}
	}
	for _, good := range []string{"etc/systemd/system/kubelet-n0.service.d/50-numa-partition.conf", "etc/numa-partition/plan.json",
		"etc/numa-partition/sysfs-n0/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "etc/kubernetes/kubelet-n0.yaml",
		"etc/containerd/n0.toml", "var/lib/kubelet-n0/config.yaml"} {
		if problem := record.WrittenPathProblem(good); problem != "" {
			t.Errorf("%s, a path apply writes: %s", good, problem)
		}
	}
}

func within2(t testing.TB, what string, f func() (string, bool, error)) (string, bool, error) {
	t.Helper()
	var out string
	var changed bool
	err := hostiletest.Within(t, what, func() error {
		var err error
		out, changed, err = f()
		return err
	})
	return out, changed, err
}

// Repro (#24, item 1, the network half): remove's network leftovers and
// status read and removed the partitions' namespaces at ROOT/run/netns
// by plain paths: with run/netns a link out of the root, a regular file
// outside (to the code: a namespace mount point gone stale) was listed
// and removed, and a link at a namespace's own name was statfs'd and
// opened outside.
func TestNetworkNamespacesThroughHostileLinksTouchNothingOutside(t *testing.T) {
	o := hostiletest.NewOutside(t, "a file outside the root\n")
	name := filepath.Base(o.Canary) // the name a namespace would have there
	rec := &record.Record{Partitions: []record.Partition{{Name: "a", Network: &bundle.PartitionNetwork{Namespace: name, HostLink: "np-a", Interface: "eth0"}}}}
	netnsRel := strings.TrimPrefix(bundle.NetnsDir, "/")
	removeAll := func(root string) {
		for _, l := range networkLeftovers(root, rec) {
			if strings.Contains(l.What, name) {
				t.Errorf("a leftover names the file outside: %q", l.What)
			}
			_ = hostiletest.Within(t, l.What, l.Remove)
		}
	}
	inspect := func(root string) (pnetns.State, error) {
		h, done, err := host.NetnsHost(root, netns.None())
		if err != nil {
			return pnetns.State{}, err
		}
		defer done()
		return h.Inspect(pnetns.Partition{Namespace: name, Interface: "eth0"})
	}

	// run/netns a link out of the root, each way a link can point.
	for how, target := range hostiletest.LinksOut(t, t.TempDir(), "run", o.Dir) {
		if how == "device" || how == "fifo" {
			continue // not directories
		}
		root := t.TempDir()
		if how == "relative" {
			target, _ = filepath.Rel(filepath.Join(root, "run"), o.Dir)
		}
		plant(t, root, netnsRel, target)
		removeAll(root)
		if st, err := inspect(root); err != nil || st.Namespace {
			t.Errorf("run/netns a link (%s): Inspect found %+v, %v; want no namespace there and no error", how, st, err)
		}
	}

	// A link at the namespace's own name.
	root := t.TempDir()
	plant(t, root, filepath.Join(netnsRel, name), o.Canary)
	_, err := inspect(root)
	wantNamed(t, "Inspect of a namespace that is a link", err, name)
	removeAll(root)
	o.Check(t)
}
