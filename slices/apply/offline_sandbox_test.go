package apply

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/status"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// TestOfflineReadsWhatTheTreeHolds (#26): a host applied by a real
// systemd, read again as a tree no systemd runs on (a copy of the host,
// an image): status, apply --dry-run and remove --dry-run work without
// systemd's bus, say what they could not read, find drift in the files,
// and change nothing; apply and remove themselves are refused.
func TestOfflineReadsWhatTheTreeHolds(t *testing.T) {
	e := newEnv(t)
	f := applytest.NewFixture(2)
	_, err := e.apply(t, f, nil)
	require.NoError(t, err)
	before := e.snapshot(t, f)
	ctx := context.Background()
	off := systemd.NewOffline(e.sb.Root)
	offOpts := func() Options {
		o := e.opts()
		o.Systemd, o.Offline, o.CgroupMode = off, true, "" // the mode from the record
		return o
	}

	// status: the record's partitions and units, enabled as the tree's
	// links say, states unknown, health "offline" (never healthy).
	so := status.Options{Root: e.sb.Root, Sysfs: e.sysfs, Systemd: off, Offline: true}
	st, err := status.Read(ctx, so)
	require.NoError(t, err)
	assert.Equal(t, status.Offline, st.Health, "problems: %q", st.Problems)
	assert.Empty(t, st.Problems)
	assert.Contains(t, st.Offline, "unit states")
	assert.Equal(t, e.recordMode(t), st.CgroupMode)
	require.Len(t, st.Partitions, 2)
	for _, p := range st.Partitions {
		require.NotEmpty(t, p.Units, p.Name)
		for _, u := range p.Units {
			assert.Equal(t, systemd.StateUnknown, u.ActiveState, u.Name)
			if strings.HasSuffix(u.Name, ".service") {
				assert.Equal(t, "enabled", u.Enabled, u.Name)
			}
		}
		assert.False(t, p.Kubelet.OK, "nothing is probed offline")
		assert.Contains(t, p.Kubelet.Detail, "offline")
	}

	// A file changed in the tree is drift, offline too.
	slice := e.sb.Path("etc/systemd/system/tnode0.slice")
	b, err := os.ReadFile(slice)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(slice, append(b, "# edited by hand\n"...), 0o644))
	st, err = status.Read(ctx, so)
	require.NoError(t, err)
	assert.Equal(t, status.Degraded, st.Health)
	assert.Contains(t, strings.Join(st.Problems, "\n"), "drift: /etc/systemd/system/tnode0.slice was changed after apply")

	// apply --dry-run: the file diff as online, unit states unknown (so
	// every unit starts), marked offline.
	bnd, err := f.Typed()
	require.NoError(t, err)
	o := offOpts()
	o.DryRun = true
	rep, err := Apply(ctx, o, bnd)
	require.NoError(t, err)
	assert.True(t, rep.Offline)
	assert.Contains(t, strings.Join(rep.Warnings, "\n"), "offline (no systemd runs for this root)")
	assert.Contains(t, rep.Diff, "-# edited by hand", "the hand edit is in the diff")
	assert.Contains(t, strings.Join(rep.Steps, "\n"), "start kubelet-tnode0.service")

	// remove --dry-run lists what remove would do.
	o = offOpts()
	o.DryRun = true
	rrep, err := Remove(ctx, o)
	require.NoError(t, err)
	assert.True(t, rrep.Offline)
	assert.Contains(t, strings.Join(rrep.Actions, "\n"), "stop kubelet-tnode0.service")

	// Changing the host offline is refused before anything is read.
	_, err = Apply(ctx, offOpts(), bnd)
	assert.True(t, errors.Is(err, errOfflineChange), "%v", err)
	_, err = Remove(ctx, offOpts())
	assert.True(t, errors.Is(err, errOfflineChange), "%v", err)

	// Nothing changed but the hand edit: units, files, record, pools.
	require.NoError(t, os.WriteFile(slice, b, 0o644))
	assert.Empty(t, diffStates(before, e.snapshot(t, f)))
}

// recordMode is the cgroup mode the sandbox's apply recorded.
func (e *env) recordMode(t testing.TB) transaction.CgroupMode {
	t.Helper()
	rec, err := record.Read(e.sb.Root)
	require.NoError(t, err)
	require.NotNil(t, rec)
	return rec.CgroupMode
}
