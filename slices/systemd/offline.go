package systemd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// StateUnknown is the active and sub state of every unit an Offline
// manager reads: only a running systemd knows them.
const StateUnknown = "unknown"

// ErrOffline is what every job of an Offline manager fails with.
var ErrOffline = errors.New("no systemd runs for this root (offline): only reads work; apply and remove need a running systemd (--dry-run works offline)")

// unitDirs are where systemd looks for unit files, highest precedence
// first (systemd.unit(5), "System Unit Search Path"), relative to the root.
var unitDirs = []string{
	"etc/systemd/system.control", "run/systemd/system.control", "run/systemd/transient",
	"etc/systemd/system", "run/systemd/system",
	"usr/local/lib/systemd/system", "usr/lib/systemd/system", "lib/systemd/system",
}

// Offline is a Manager for a root tree no systemd runs on: an image, a
// chroot before its first boot, a copy of a host. What the tree says is
// read from it, below the root and without following a link out of it:
// whether a unit file exists (LoadState "loaded", or "masked" when it is a
// link to /dev/null) and whether it is enabled (a link to it in a .wants
// or .requires directory under etc/systemd/system). What only a running
// systemd knows (active and sub state, PIDs, cpusets in force) is
// StateUnknown or empty, and every job fails with ErrOffline, so that a
// dry run, status and diff work offline and nothing can be changed.
type Offline struct {
	root fsutil.Root
}

// NewOffline is an Offline manager of the tree at root.
func NewOffline(root string) *Offline { return &Offline{root: fsutil.NewRoot(root)} }

var _ Manager = (*Offline)(nil)

// Reload fails: there is no systemd to reload.
func (o *Offline) Reload(context.Context) error { return ErrOffline }

// StartUnit fails: there is no systemd to start a unit.
func (o *Offline) StartUnit(_ context.Context, name string) error { return o.job("start", name) }

// StopUnit fails likewise.
func (o *Offline) StopUnit(_ context.Context, name string) error { return o.job("stop", name) }

// RestartUnit fails likewise.
func (o *Offline) RestartUnit(_ context.Context, name string) error { return o.job("restart", name) }

// ResetFailed fails likewise.
func (o *Offline) ResetFailed(_ context.Context, name string) error {
	return o.job("reset-failed", name)
}

// EnableUnitFiles fails: enabling belongs to apply, which needs systemd.
func (o *Offline) EnableUnitFiles(_ context.Context, names []string) error {
	return o.job("enable", strings.Join(names, " "))
}

// DisableUnitFiles fails likewise.
func (o *Offline) DisableUnitFiles(_ context.Context, names []string) error {
	return o.job("disable", strings.Join(names, " "))
}

// SetUnitProperties fails: runtime properties need a running systemd.
func (o *Offline) SetUnitProperties(_ context.Context, name string, _ ...Property) error {
	return o.job("set-property", name)
}

// Close does nothing.
func (o *Offline) Close() {}

func (o *Offline) job(op, name string) error { return fmt.Errorf("%s %s: %w", op, name, ErrOffline) }

// Unit reads what the tree says of the unit.
func (o *Offline) Unit(_ context.Context, name string) (UnitInfo, error) {
	info := UnitInfo{Name: name, LoadState: "not-found", ActiveState: StateUnknown, SubState: StateUnknown}
	if err := validName(name); err != nil {
		return info, err
	}
	for _, dir := range unitDirs {
		rel := path.Join(dir, name)
		st, err := o.root.Lstat(rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return info, fmt.Errorf("unit %s: %w", name, err)
		}
		info.FragmentPath = "/" + rel
		info.LoadState = "loaded"
		if st.Mode()&fs.ModeSymlink != 0 {
			if target, err := o.root.Readlink(rel); err == nil && target == "/dev/null" {
				info.LoadState, info.FragmentPath = "masked", ""
				info.UnitFileState = "masked"
				return info, nil
			}
		}
		break
	}
	if info.LoadState == "not-found" {
		return info, nil
	}
	enabled, err := o.enabled(name)
	if err != nil {
		return info, err
	}
	info.UnitFileState = "disabled"
	if enabled {
		info.UnitFileState = "enabled"
	}
	return info, nil
}

// enabled says whether a .wants or .requires directory of
// etc/systemd/system links to the unit, as `systemctl enable` leaves it.
func (o *Offline) enabled(name string) (bool, error) {
	const etc = "etc/systemd/system"
	entries, err := o.root.ReadDir(etc)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading /%s: %w", etc, err)
	}
	for _, e := range entries {
		if !e.IsDir() || !(strings.HasSuffix(e.Name(), ".wants") || strings.HasSuffix(e.Name(), ".requires")) {
			continue
		}
		st, err := o.root.Lstat(path.Join(etc, e.Name(), name))
		if err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return true, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("reading /%s/%s/%s: %w", etc, e.Name(), name, err)
		}
	}
	return false, nil
}

// ListUnits lists the unit files of the tree whose names match any
// pattern, with unknown states: no unit is loaded where systemd does not run.
func (o *Offline) ListUnits(_ context.Context, patterns ...string) ([]UnitStatus, error) {
	seen := map[string]bool{}
	var out []UnitStatus
	for _, dir := range unitDirs {
		entries, err := o.root.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading /%s: %w", dir, err)
		}
		for _, e := range entries {
			if e.IsDir() || seen[e.Name()] || !matchesAny(e.Name(), patterns) {
				continue
			}
			seen[e.Name()] = true
			out = append(out, UnitStatus{Name: e.Name(), LoadState: "loaded", ActiveState: StateUnknown, SubState: StateUnknown})
		}
	}
	return out, nil
}

func matchesAny(name string, patterns []string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, err := path.Match(p, name); err == nil && ok {
			return true
		}
	}
	return false
}

// validName refuses a unit name that is a path: it is looked up below the
// root's unit directories, never elsewhere.
func validName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("unit name %q: not a unit name", name)
	}
	return nil
}
