package systemd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// offlineTree is a root as an image or a chroot has it: unit files in
// the search path, one enabled, one masked, one a link out of the root.
func offlineTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	link := func(target, rel string) {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.Symlink(target, p))
	}
	write("etc/systemd/system/kubelet-node0.service", "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n")
	link("/etc/systemd/system/kubelet-node0.service", "etc/systemd/system/multi-user.target.wants/kubelet-node0.service")
	write("etc/systemd/system/containerd-node0.service", "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n")
	write("usr/lib/systemd/system/dbus.service", "[Service]\nExecStart=/bin/true\n")
	write("etc/systemd/system/node0.slice", "[Slice]\n")
	link("/dev/null", "etc/systemd/system/masked.service")
	// Read as a link, never followed: the host's passwd is not a unit.
	link("/etc/passwd", "etc/systemd/system/escape.service")
	return root
}

func TestOfflineUnitReadsTheTree(t *testing.T) {
	m := NewOffline(offlineTree(t))
	ctx := context.Background()
	for _, tc := range []struct {
		name, load, file, fragment string
	}{
		{"kubelet-node0.service", "loaded", "enabled", "/etc/systemd/system/kubelet-node0.service"},
		{"containerd-node0.service", "loaded", "disabled", "/etc/systemd/system/containerd-node0.service"},
		{"dbus.service", "loaded", "disabled", "/usr/lib/systemd/system/dbus.service"},
		{"node0.slice", "loaded", "disabled", "/etc/systemd/system/node0.slice"},
		{"masked.service", "masked", "masked", ""},
		{"escape.service", "loaded", "disabled", "/etc/systemd/system/escape.service"},
		{"absent.service", "not-found", "", ""},
	} {
		u, err := m.Unit(ctx, tc.name)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.load, u.LoadState, tc.name)
		assert.Equal(t, tc.file, u.UnitFileState, tc.name)
		assert.Equal(t, tc.fragment, u.FragmentPath, tc.name)
		assert.Equal(t, StateUnknown, u.ActiveState, "%s: only a running systemd knows", tc.name)
		assert.False(t, u.Active(), tc.name)
		assert.Zero(t, u.MainPID, tc.name)
	}
	assert.True(t, mustUnit(t, m, "kubelet-node0.service").Enabled())
}

func mustUnit(t *testing.T, m Manager, name string) UnitInfo {
	t.Helper()
	u, err := m.Unit(context.Background(), name)
	require.NoError(t, err)
	return u
}

func TestOfflineRefusesPathsAsUnitNames(t *testing.T) {
	m := NewOffline(offlineTree(t))
	for _, name := range []string{"../../etc/passwd", "a/b.service", "", "..", "x\x00.service"} {
		_, err := m.Unit(context.Background(), name)
		assert.ErrorContains(t, err, "not a unit name", "%q", name)
	}
}

func TestOfflineListUnitsMatchesThePatterns(t *testing.T) {
	m := NewOffline(offlineTree(t))
	got, err := m.ListUnits(context.Background(), "kubelet-*", "*.slice")
	require.NoError(t, err)
	var names []string
	for _, u := range got {
		names = append(names, u.Name)
		assert.Equal(t, StateUnknown, u.ActiveState)
	}
	assert.ElementsMatch(t, []string{"kubelet-node0.service", "node0.slice"}, names)
}

// Nothing changes a tree offline: every job fails and says what works.
func TestOfflineJobsFail(t *testing.T) {
	m := NewOffline(offlineTree(t))
	ctx := context.Background()
	for name, err := range map[string]error{
		"reload":   m.Reload(ctx),
		"start":    m.StartUnit(ctx, "kubelet-node0.service"),
		"stop":     m.StopUnit(ctx, "kubelet-node0.service"),
		"restart":  m.RestartUnit(ctx, "kubelet-node0.service"),
		"reset":    m.ResetFailed(ctx, "kubelet-node0.service"),
		"enable":   m.EnableUnitFiles(ctx, []string{"a.service"}),
		"disable":  m.DisableUnitFiles(ctx, []string{"a.service"}),
		"property": m.SetUnitProperties(ctx, "node0.slice"),
	} {
		assert.True(t, errors.Is(err, ErrOffline), "%s: %v", name, err)
	}
	assert.ErrorContains(t, ErrOffline, "--dry-run works offline")
}
