package netns

import (
	"net"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// scratchHost is a host of its own for one test: a fresh network
// namespace standing for the host's (with a NIC "uplink0" of MTU 1400, a veth,
// holding the default route) and a directory of named namespaces, so that
// the test builds real bridges, veths, macvlans and NAT on the real kernel
// without touching this machine's network.
func scratchHost(t *testing.T) *Host {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("%s: needs root (network namespaces)", t.Name())
	}
	ch := make(chan netns.NsHandle, 1)
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies in the scratch namespace
		ns, err := netns.New()
		if err != nil {
			errc <- err
			return
		}
		ch <- ns
	}()
	var ns netns.NsHandle
	select {
	case ns = <-ch:
	case err := <-errc:
		t.Fatalf("creating a scratch network namespace: %v", err)
	}
	h := &Host{Dir: filepath.Join(t.TempDir(), "netns"), NS: ns}
	t.Cleanup(func() {
		entries, _ := os.ReadDir(h.Dir)
		for _, e := range entries {
			unix.Unmount(filepath.Join(h.Dir, e.Name()), unix.MNT_DETACH)
		}
		unix.Unmount(h.Dir, unix.MNT_DETACH)
		ns.Close()
	})
	nl := handle(t, ns)
	attrs := netlink.NewLinkAttrs()
	attrs.Name, attrs.MTU = "uplink0", 1400
	// A veth stands for the NIC: kernels without the dummy module exist.
	require.NoError(t, nl.LinkAdd(&netlink.Veth{LinkAttrs: attrs, PeerName: "uplink0p"}))
	up, err := nl.LinkByName("uplink0")
	require.NoError(t, err)
	require.NoError(t, nl.LinkSetUp(up))
	require.NoError(t, nl.AddrAdd(up, &netlink.Addr{IPNet: ipNet(netip.MustParsePrefix("192.0.2.10/24"))}))
	require.NoError(t, nl.RouteAdd(&netlink.Route{LinkIndex: up.Attrs().Index, Gw: net.ParseIP("192.0.2.1")}))
	return h
}

func handle(t *testing.T, ns netns.NsHandle) *netlink.Handle {
	t.Helper()
	h, err := netlink.NewHandleAt(ns)
	require.NoError(t, err)
	t.Cleanup(h.Close)
	return h
}

func linkNames(t *testing.T, nl *netlink.Handle) []string {
	t.Helper()
	links, err := nl.LinkList()
	require.NoError(t, err)
	var names []string
	for _, l := range links {
		names = append(names, l.Attrs().Name)
	}
	return names
}

func forwarding(t *testing.T, h *Host) string {
	t.Helper()
	var v []byte
	require.NoError(t, h.inHost(func() (err error) {
		v, err = os.ReadFile("/proc/sys/net/ipv4/ip_forward")
		return err
	}))
	return strings.TrimSpace(string(v))
}

var bridgeUplink = Uplink{Kind: KindBridge, Bridge: "nptest0",
	HostAddress: netip.MustParsePrefix("10.212.0.1/24"), NAT: netip.MustParsePrefix("10.212.0.0/24")}

func part(name, addr string) Partition {
	return Partition{Namespace: "np-" + name, HostLink: "np-" + name, Interface: "eth0",
		Address: netip.MustParsePrefix(addr), Gateway: netip.MustParseAddr("10.212.0.1")}
}

// inNamed runs f in the named namespace (a server or client there).
func inNamed(t *testing.T, h *Host, name string, f func()) {
	t.Helper()
	ns, err := h.openNamespace(name)
	require.NoError(t, err)
	defer ns.Close()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := netns.Set(ns); err != nil {
			done <- err
			return
		}
		f()
		done <- nil // the thread stays locked and dies here
	}()
	require.NoError(t, <-done)
}

func TestBridgeUplinkUpDownOnTheRealKernel(t *testing.T) {
	h := scratchHost(t)
	state := fsutil.NewRoot(t.TempDir())
	nl := handle(t, h.NS)
	before := linkNames(t, nl)
	require.Equal(t, "0", forwarding(t, h), "a fresh namespace forwards nothing")

	require.NoError(t, h.UpUplink(bridgeUplink, state))
	a, b := part("a", "10.212.0.2/24"), part("b", "10.212.0.3/24")
	require.NoError(t, h.UpPartition(bridgeUplink, a))
	require.NoError(t, h.UpPartition(bridgeUplink, b))

	br, err := nl.LinkByName("nptest0")
	require.NoError(t, err)
	require.Equal(t, "bridge", br.Type())
	require.Equal(t, 1400, br.Attrs().MTU, "the bridge follows the MTU of the default route's NIC")
	addrs, err := nl.AddrList(br, unix.AF_INET)
	require.NoError(t, err)
	require.Len(t, addrs, 1)
	require.Equal(t, "10.212.0.1/24", prefixOf(addrs[0].IPNet).String())
	require.Equal(t, "1", forwarding(t, h))
	nat, err := h.HasNAT()
	require.NoError(t, err)
	require.True(t, nat)
	for _, p := range []Partition{a, b} {
		end, err := nl.LinkByName(p.HostLink)
		require.NoError(t, err)
		require.Equal(t, br.Attrs().Index, end.Attrs().MasterIndex, "%s on the bridge", p.HostLink)
		st, err := h.Inspect(p)
		require.NoError(t, err)
		require.Equal(t, State{Namespace: true, Link: true, Up: true, Addresses: []netip.Prefix{p.Address}, Devices: []string{}}, st)
		ns, err := h.openNamespace(p.Namespace)
		require.NoError(t, err)
		inner := handle(t, ns)
		ns.Close()
		require.ElementsMatch(t, []string{"lo", "eth0"}, linkNames(t, inner),
			"a partition sees its own interfaces only")
		routes, err := inner.RouteList(nil, unix.AF_INET)
		require.NoError(t, err)
		var gw string
		for _, r := range routes {
			if isDefault(r) {
				gw = r.Gw.String()
			}
		}
		require.Equal(t, "10.212.0.1", gw, "%s's default route", p.Namespace)
		var fwd []byte
		inNamed(t, h, p.Namespace, func() { fwd, _ = os.ReadFile("/proc/sys/net/ipv4/ip_forward") })
		require.Equal(t, "1", strings.TrimSpace(string(fwd)), "%s forwards, as a Node does", p.Namespace)
	}

	// Partition a reaches b's address through the bridge.
	var ln net.Listener
	inNamed(t, h, b.Namespace, func() { ln, err = net.Listen("tcp", "10.212.0.3:10250") })
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Write([]byte("b"))
			c.Close()
		}
	}()
	var got []byte
	inNamed(t, h, a.Namespace, func() {
		c, derr := net.DialTimeout("tcp", "10.212.0.3:10250", 10*time.Second)
		if derr != nil {
			err = derr
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		got = make([]byte, 1)
		_, err = c.Read(got)
	})
	require.NoError(t, err)
	require.Equal(t, "b", string(got))

	// Up again converges; a new address replaces the old one.
	require.NoError(t, h.UpUplink(bridgeUplink, state))
	require.NoError(t, h.UpPartition(bridgeUplink, a))
	moved := part("a", "10.212.0.9/24")
	require.NoError(t, h.UpPartition(bridgeUplink, moved))
	st, err := h.Inspect(moved)
	require.NoError(t, err)
	require.Equal(t, []netip.Prefix{moved.Address}, st.Addresses)

	// Down leaves the host as it was.
	require.NoError(t, h.DownPartition(a))
	require.NoError(t, h.DownPartition(b))
	require.NoError(t, h.DownUplink(bridgeUplink, state))
	require.ElementsMatch(t, before, linkNames(t, nl))
	require.Equal(t, "0", forwarding(t, h), "forwarding back to what it was")
	nat, err = h.HasNAT()
	require.NoError(t, err)
	require.False(t, nat)
	entries, err := os.ReadDir(h.Dir)
	require.NoError(t, err)
	require.Empty(t, entries)
	st, err = h.Inspect(a)
	require.NoError(t, err)
	require.False(t, st.Namespace)
	// And again: nothing left to remove is not an error.
	require.NoError(t, h.DownPartition(a))
	require.NoError(t, h.DownUplink(bridgeUplink, state))
}

func TestUpFinishesWhatAKilledRunLeft(t *testing.T) {
	h := scratchHost(t)
	state := fsutil.NewRoot(t.TempDir())
	require.NoError(t, h.UpUplink(bridgeUplink, state))
	a := part("a", "10.212.0.2/24")
	// Killed between creating the mount point and mounting on it.
	require.NoError(t, os.MkdirAll(h.Dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(h.Dir, a.Namespace), nil, 0o444))
	// And a host end left from a namespace that outlived its mount.
	nl := handle(t, h.NS)
	attrs := netlink.NewLinkAttrs()
	attrs.Name = a.HostLink
	require.NoError(t, nl.LinkAdd(&netlink.Veth{LinkAttrs: attrs, PeerName: "stale-peer"}))

	require.NoError(t, h.UpPartition(bridgeUplink, a))
	st, err := h.Inspect(a)
	require.NoError(t, err)
	require.Equal(t, State{Namespace: true, Link: true, Up: true, Addresses: []netip.Prefix{a.Address}, Devices: []string{}}, st)
	require.NotContains(t, linkNames(t, nl), "stale-peer")
}

func TestStaleEntriesAreTheUnmountedOnes(t *testing.T) {
	h := scratchHost(t)
	require.NoError(t, h.UpUplink(bridgeUplink, fsutil.NewRoot(t.TempDir())))
	a := part("a", "10.212.0.2/24")
	require.NoError(t, h.UpPartition(bridgeUplink, a))
	stale := filepath.Join(h.Dir, "cni-0000")
	require.NoError(t, os.WriteFile(stale, nil, 0o444))
	got, err := h.StaleEntries()
	require.NoError(t, err)
	require.Equal(t, []string{"cni-0000"}, got, "the mounted np-a is a namespace, the empty file is not")
	got, err = (&Host{Dir: filepath.Join(h.Dir, "nosuch")}).StaleEntries()
	require.NoError(t, err)
	require.Empty(t, got)
	got, err = (&Host{}).StaleEntries()
	require.NoError(t, err)
	require.Empty(t, got, "a host without the directory")
}

func TestMacvlanUplink(t *testing.T) {
	h := scratchHost(t)
	u := Uplink{Kind: KindMacvlan, Parent: "uplink0"}
	require.NoError(t, h.UpUplink(u, fsutil.NewRoot(t.TempDir())))
	p := Partition{Namespace: "np-m", HostLink: "np-m", Interface: "eth0",
		Address: netip.MustParsePrefix("192.0.2.21/24"), Gateway: netip.MustParseAddr("192.0.2.1")}
	require.NoError(t, h.UpPartition(u, p))
	require.NoError(t, h.UpPartition(u, p), "converges")
	st, err := h.Inspect(p)
	require.NoError(t, err)
	require.Equal(t, State{Namespace: true, Link: true, Up: true, Addresses: []netip.Prefix{p.Address}, Devices: []string{}}, st)
	ns, err := h.openNamespace(p.Namespace)
	require.NoError(t, err)
	inner := handle(t, ns)
	ns.Close()
	l, err := inner.LinkByName("eth0")
	require.NoError(t, err)
	require.Equal(t, "macvlan", l.Type())
	require.Equal(t, 1400, l.Attrs().MTU, "the parent's MTU")
	nl := handle(t, h.NS)
	require.NotContains(t, linkNames(t, nl), "np-m", "the macvlan lives in the namespace only")

	require.NoError(t, h.DownPartition(p))
	require.ElementsMatch(t, []string{"lo", "uplink0", "uplink0p"}, linkNames(t, nl))

	err = h.UpUplink(Uplink{Kind: KindMacvlan, Parent: "nosuch0"}, fsutil.NewRoot(t.TempDir()))
	require.ErrorContains(t, err, "uplink NIC nosuch0")
}

func TestBridgeNameTakenByAnotherKindOfLink(t *testing.T) {
	h := scratchHost(t)
	u := bridgeUplink
	u.Bridge = "uplink0"
	err := h.UpUplink(u, fsutil.NewRoot(t.TempDir()))
	require.ErrorContains(t, err, "uplink0 is a veth, not a bridge")
	err = h.DownUplink(u, fsutil.NewRoot(t.TempDir()))
	require.ErrorContains(t, err, "left alone")
	require.Contains(t, linkNames(t, handle(t, h.NS)), "uplink0")
}

// TestDevicesMoveIntoTheNamespaceAndBack: veths stand for NICs (every
// kernel has them; dummy is a module). up moves them into the partition's
// namespace as they are, converges, and down moves them back to the
// host's under their names: a virtual device left in a namespace that is
// deleted would be destroyed with it, a physical one come back only once
// the kernel frees the namespace.
func TestDevicesMoveIntoTheNamespaceAndBack(t *testing.T) {
	h := scratchHost(t)
	nl := handle(t, h.NS)
	for _, n := range []string{"nic0", "nic1"} {
		attrs := netlink.NewLinkAttrs()
		attrs.Name = n
		require.NoError(t, nl.LinkAdd(&netlink.Veth{LinkAttrs: attrs, PeerName: n + "p"}))
	}
	require.NoError(t, h.UpUplink(bridgeUplink, fsutil.NewRoot(t.TempDir())))
	p := part("d", "10.212.0.2/24")
	p.Devices = []string{"nic0", "nic1"}
	require.NoError(t, h.UpPartition(bridgeUplink, p))
	require.NoError(t, h.UpPartition(bridgeUplink, p), "converges: the devices are in already")
	require.NotContains(t, linkNames(t, nl), "nic0")
	require.NotContains(t, linkNames(t, nl), "nic1")
	ns, err := h.openNamespace(p.Namespace)
	require.NoError(t, err)
	inner := handle(t, ns)
	ns.Close()
	require.ElementsMatch(t, []string{"lo", "eth0", "nic0", "nic1"}, linkNames(t, inner))
	st, err := h.Inspect(p)
	require.NoError(t, err)
	require.Equal(t, []string{"nic0", "nic1"}, st.Devices)

	require.NoError(t, h.DownPartition(p))
	require.Subset(t, linkNames(t, nl), []string{"nic0", "nic0p", "nic1", "nic1p"}, "back on the host, under their names")
	require.NoError(t, h.DownPartition(p), "down again: nothing to do")

	// A device that is nowhere (a pod's namespace holds it) is reported,
	// and the rest of the partition is up.
	p.Devices = []string{"nic9", "nic0"}
	err = h.UpPartition(bridgeUplink, p)
	var missing *MissingDevicesError
	require.ErrorAs(t, err, &missing)
	require.Equal(t, []string{"nic9"}, missing.Devices)
	require.ErrorContains(t, err, "devices nic9 are neither in the host's namespace nor in np-d")
	st, err = h.Inspect(p)
	require.NoError(t, err)
	require.True(t, st.Up)
	require.Equal(t, []string{"nic0"}, st.Devices)
	require.NoError(t, h.DownPartition(p))
	require.Contains(t, linkNames(t, nl), "nic0")
}

// Repro (#38, item 1, every write of every command): a dangling link
// planted at the state dir's forwarding file had the setting written
// where it pointed. The one atomic write follows no link there.
func TestForwardingFileFollowsNoLink(t *testing.T) {
	h := scratchHost(t)
	state := fsutil.NewRoot(t.TempDir())
	outside := filepath.Join(t.TempDir(), "planted")
	require.NoError(t, os.MkdirAll(state.Path(path.Dir(ForwardingFile)), 0o755))
	require.NoError(t, os.Symlink(outside, state.Path(ForwardingFile)))
	require.NoError(t, h.enableForwarding(state))
	_, err := os.Lstat(outside)
	require.ErrorIs(t, err, os.ErrNotExist, "written through the link at %s", ForwardingFile)
}

// TestSavedForwardingIsALeftoverRestoreFinds: an uplink stopped without
// its ExecStop= (#38 item 4) leaves forwarding on and the value found
// before saved; RestoreForwarding, which remove runs for it, puts the
// value back and forgets it. A value that is neither 0 nor 1 is refused,
// never written to the kernel.
func TestSavedForwardingIsALeftoverRestoreFinds(t *testing.T) {
	h := scratchHost(t)
	state := fsutil.NewRoot(t.TempDir())
	require.NoError(t, h.UpUplink(bridgeUplink, state))
	require.Equal(t, "1", forwarding(t, h))
	v, ok, err := SavedForwarding(state)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "0", v)

	require.NoError(t, h.RestoreForwarding(state))
	require.Equal(t, "0", forwarding(t, h), "forwarding back to what it was")
	_, ok, err = SavedForwarding(state)
	require.NoError(t, err)
	require.False(t, ok, "the saved value outlived its restore")
	require.NoError(t, h.RestoreForwarding(state), "nothing saved is nothing to do")

	require.NoError(t, state.WriteFile(ForwardingFile, []byte("7\n"), 0o644))
	_, _, err = SavedForwarding(state)
	require.ErrorContains(t, err, "allowed are 0 and 1")
	require.Error(t, h.RestoreForwarding(state))
	require.NoError(t, removeBridge(handle(t, h.NS), bridgeUplink.Bridge))
}
