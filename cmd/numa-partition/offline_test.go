package main

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A --root no systemd runs on (no run/dbus/system_bus_socket: an image,
// a chroot, a copy of a host) is read offline by status and the dry runs,
// which failed at once without the bus (#26); apply and remove refuse it,
// naming what works.
func TestRootWithoutSystemdIsReadOffline(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join("..", "..", "test", "e2e", "guest", "config", "partitions.toml")
	base := []string{"--sysfs", fixtureSys("qemu-2node-v2"), "--config", cfg, "--hostname", "h", "--root", root}

	// Nothing applied: no record to take the cgroup mode from.
	_, err := runCLI(append([]string{"apply", "--dry-run"}, base...)...)
	assert.ErrorContains(t, err, "give the host's mode with --cgroup-mode")

	out, err := runCLI(append([]string{"apply", "--dry-run", "--cgroup-mode", "unified"}, base...)...)
	require.NoError(t, err, out)
	assert.Contains(t, out, "would run ")
	assert.Contains(t, out, "start kubelet-node0.service")
	assert.Contains(t, out, "warning: offline (no systemd runs for this root)")
	assert.Contains(t, out, "+++ b/etc/systemd/system/kubelet-node0.service")

	out, err = runCLI(append([]string{"apply", "--dry-run", "--cgroup-mode", "unified", "-o", "json"}, base...)...)
	require.NoError(t, err, out)
	assert.Contains(t, out, `"offline": true`)

	out, err = runCLI("status", "--root", root)
	var ec exitCoder
	require.True(t, errors.As(err, &ec), "%v", err)
	assert.Equal(t, 1, ec.ExitCode())
	assert.Contains(t, out, "NOT-APPLIED")

	out, err = runCLI("remove", "--dry-run", "--root", root)
	require.NoError(t, err, out)
	assert.Contains(t, out, "nothing applied")

	_, err = runCLI(append([]string{"apply", "--cgroup-mode", "unified"}, base...)...)
	assert.ErrorContains(t, err, "has no run/dbus/system_bus_socket (no systemd runs there): apply changes the host through a running systemd; offline, status, diff and --dry-run work")
	_, err = runCLI("remove", "--root", root)
	assert.ErrorContains(t, err, "remove changes the host through a running systemd")
	_, err = runCLI("status", "--root", root, "--offline", "--bus", "unix:path=/x")
	assert.ErrorContains(t, err, "--offline and --bus")
}

// #38 item 9: status --root /nonexistent said NOT-APPLIED (exit 1); a
// root that is not there is an error naming it (exit 2).
func TestStatusOfAMissingRootIsAnError(t *testing.T) {
	root := filepath.Join(t.TempDir(), "nonexistent")
	out, err := runCLI("status", "--root", root)
	require.Error(t, err)
	var ec exitCoder
	assert.False(t, errors.As(err, &ec) && ec.ExitCode() == 1, "exit 1 (not applied or degraded) for a missing root: %v", err)
	assert.ErrorContains(t, err, root)
	assert.NotContains(t, out, "NOT-APPLIED")
}
