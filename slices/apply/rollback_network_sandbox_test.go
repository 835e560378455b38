package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/status"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
	pnetns "github.com/numa-partition/numa-partition/slices/netns"
	"github.com/numa-partition/numa-partition/slices/systemd/systemdtest"
)

// brokenNetnsDir makes the sandbox's /run/netns a file, as #38 item 4 did
// to a host: a partition's namespace oneshot (`ip netns add`) then fails,
// after its start pulled in the uplink (Requires=), which made the bridge.
func brokenNetnsDir(t *testing.T, e *env) {
	t.Helper()
	p := e.sb.Path("run/netns")
	applytest.Must(t, os.RemoveAll(p))
	applytest.Must(t, os.WriteFile(p, []byte("not a directory\n"), 0o644))
	t.Cleanup(func() { _ = os.Remove(p) })
}

// TestRollbackStopsTheUplinkItsStartPulledIn is #38 item 4: with run/netns
// a file, the namespace oneshot fails. Its start had pulled in the uplink,
// which no step had started yet, so the rollback had no entry for it; and
// a unit stopped after the reload that took its file away has no ExecStop=
// any more. The bridge stayed, the record said nothing was applied. Now
// the rollback stops it while its file is loaded: the bridge goes and the
// host is as before.
func TestRollbackStopsTheUplinkItsStartPulledIn(t *testing.T) {
	e := newEnv(t)
	f := withNetwork(applytest.NewFixture(1), "nptbr0", "", false)
	before := e.snapshot(t, f)
	brokenNetnsDir(t, e)
	_, err := e.apply(t, f, nil)
	var se *transaction.StepError
	if !errors.As(err, &se) || se.Rollback != nil || !strings.Contains(se.Step.String(), "tnetns-tnode0") {
		t.Fatalf("apply with run/netns a file: %v; want a failed start of tnetns-tnode0.service, rolled back completely", err)
	}
	if links := sandboxLinks(t, e); slices.Contains(links, "nptbr0") {
		t.Errorf("the rollback left the uplink's bridge nptbr0: %v", links)
	}
	if d := diffStates(before, e.snapshot(t, f)); len(d) > 0 {
		t.Errorf("the rollback left the host changed:\n%s", strings.Join(d, "\n"))
	}
}

// TestIncompleteRollbackKeepsThePendingRecord: when an undo fails (here
// the stop of the uplink, through the fault-injecting Manager) the
// pending record stays, so that status names the interrupted apply and
// remove takes away what is left (the bridge), where the previous record
// put back said nothing was applied and remove left it (#38 item 4).
func TestIncompleteRollbackKeepsThePendingRecord(t *testing.T) {
	e := newEnv(t)
	f := withForwarding(withNetwork(applytest.NewFixture(1), "nptbr0", "", false))
	before := e.snapshot(t, f)
	require.Equal(t, "0", sandboxForwarding(t, e), "the sandbox forwards before apply")
	brokenNetnsDir(t, e)
	counting := &systemdtest.Faulty{Manager: e.m, FailAt: -1}
	_, err := e.apply(t, f, func(o *Options) { o.Systemd = counting })
	if err == nil {
		t.Fatal("apply with run/netns a file succeeded")
	}
	stop := slices.Index(counting.Calls, "stop tnuma-network.service")
	if stop < 0 {
		t.Fatalf("the rollback never stopped the uplink: %v", counting.Calls)
	}
	fm := &systemdtest.Faulty{Manager: e.m, FailAt: stop + 1}
	_, err = e.apply(t, f, func(o *Options) { o.Systemd = fm })
	var se *transaction.StepError
	if !errors.As(err, &se) || !errors.Is(se.Rollback, systemdtest.ErrInjected) || !strings.Contains(err.Error(), "stays pending") {
		t.Fatalf("apply whose rollback cannot stop the uplink: %v; want ROLLBACK INCOMPLETE naming the pending record", err)
	}
	rec, err := record.Read(e.sb.Root)
	applytest.Must(t, err)
	if rec == nil || !rec.Pending {
		t.Fatalf("after an incomplete rollback the record is %+v; want the pending one", rec)
	}
	st, err := status.Read(context.Background(), status.Options{Root: e.sb.Root, Sysfs: e.sysfs, Systemd: e.m, NoAPI: true})
	applytest.Must(t, err)
	if !slices.ContainsFunc(st.Problems, func(p string) bool { return strings.Contains(p, "was interrupted") }) {
		t.Errorf("status after an incomplete rollback does not name it: %v", st.Problems)
	}
	if links := sandboxLinks(t, e); !slices.Contains(links, "nptbr0") {
		t.Fatalf("the fault did not keep the bridge (links %v): the test proves nothing", links)
	}
	if v := sandboxForwarding(t, e); v != "1" {
		t.Fatalf("the fault did not leave forwarding on (ip_forward %s): the test proves nothing", v)
	}
	rm, err := Remove(context.Background(), e.opts())
	applytest.Must(t, err)
	if links := sandboxLinks(t, e); slices.Contains(links, "nptbr0") {
		t.Errorf("remove left the bridge nptbr0: %v\n%s", links, strings.Join(rm.Actions, "\n"))
	}
	// The uplink was stopped without restoring forwarding: remove puts
	// back the value its first start found (#38 item 4: ip_forward=1,
	// was 0).
	if v := sandboxForwarding(t, e); v != "0" {
		t.Errorf("remove left ip_forward %s, was 0:\n%s", v, strings.Join(rm.Actions, "\n"))
	}
	if !slices.Contains(rm.Actions, "restore net.ipv4.ip_forward to 0 (the uplink stopped without restoring it)") {
		t.Errorf("remove did not say it restored forwarding:\n%s", strings.Join(rm.Actions, "\n"))
	}
	if _, err := os.Lstat(e.sb.Path(pnetns.ForwardingFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("remove kept the saved forwarding value %s (%v)", pnetns.ForwardingFile, err)
	}
	if d := diffStates(before, e.snapshot(t, f)); len(d) > 0 {
		t.Errorf("remove after an incomplete rollback left the host changed:\n%s", strings.Join(d, "\n"))
	}
}

// withForwarding makes f's test uplink turn IPv4 forwarding on, keeping
// the value found before where the real uplink keeps it
// (pnetns.ForwardingFile) the first time, and restore nothing when it stops: as an
// uplink stopped after its unit file was gone, whose ExecStop= did not
// run (#38 item 4).
func withForwarding(f *applytest.Fixture) *applytest.Fixture {
	g := *f
	g.Bundle.Files = slices.Clone(f.Bundle.Files)
	saved := "/" + pnetns.ForwardingFile
	for i, bf := range g.Bundle.Files {
		if bf.Path != "etc/systemd/system/tnuma-network.service" {
			continue
		}
		up := fmt.Sprintf("ExecStartPre=/bin/sh -c 'mkdir -p %[1]s && { [ -e %[2]s ] || cat /proc/sys/net/ipv4/ip_forward > %[2]s; } && echo 1 > /proc/sys/net/ipv4/ip_forward'\nExecStart=", path.Dir(saved), saved)
		g.Bundle.Files[i].Content = []byte(strings.Replace(string(bf.Content), "ExecStart=", up, 1))
	}
	return &g
}

// sandboxForwarding is net.ipv4.ip_forward in the sandbox's network
// namespace (its systemd's, where the uplink runs).
func sandboxForwarding(t *testing.T, e *env) string {
	t.Helper()
	var b []byte
	var err error
	applytest.Must(t, host.InNetns(e.sb.Root, host.RootNetns(e.sb.Root), func() { b, err = os.ReadFile("/proc/sys/net/ipv4/ip_forward") }))
	applytest.Must(t, err)
	return strings.TrimSpace(string(b))
}
