package apply

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// withNetwork gives the fixture's first partition the network oneshots
// of namespace mode, written with iproute2 so that the test needs no
// numa-partition binary in the sandbox: an uplink that makes bridge,
// and a namespace oneshot that makes np-tnode0 and moves device into it
// (a veth stands for a NIC). Like render's units, their ExecStop= know
// their own generation's objects only (the uplink's removes nothing
// when keepBridge), and the namespace's requires the uplink, so that its
// start starts the uplink too (templates/netns.service.tmpl).
func withNetwork(f *applytest.Fixture, bridge, device string, keepBridge bool) *applytest.Fixture {
	g := *f
	g.Bundle.Files = append([]bundle.File(nil), f.Bundle.Files...)
	g.Bundle.Units = append([]bundle.Unit(nil), f.Bundle.Units...)
	add := func(u bundle.Unit, content string) {
		p := "etc/systemd/system/" + u.Name
		u.Files = []string{p}
		g.Bundle.Files = append(g.Bundle.Files, bundle.File{Path: p, Mode: 0o644, Content: []byte(content)})
		g.Bundle.Units = append(g.Bundle.Units, u)
	}
	stop := "/usr/sbin/ip link del " + bridge
	if keepBridge {
		stop = "/bin/true"
	}
	add(bundle.Unit{Name: "tnuma-network.service", Phase: bundle.PhaseNetwork, Enable: true, Start: true},
		fmt.Sprintf("[Unit]\nDescription=test uplink\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/usr/sbin/ip link add %s type bridge\nExecStop=%s\n[Install]\nWantedBy=multi-user.target\n", bridge, stop))
	up := "/usr/sbin/ip netns add np-tnode0"
	ns := bundle.Namespace{Partition: "tnode0", Name: "np-tnode0", HostLink: "np-tnode0", Interface: "eth0"}
	if device != "" {
		up = fmt.Sprintf("/bin/sh -c 'ip netns add np-tnode0 && { ip link show %[1]s >/dev/null 2>&1 || ip link add %[1]s type veth peer %[1]sp; } && ip link set %[1]s netns np-tnode0'", device)
		ns.Devices = []string{device}
	}
	add(bundle.Unit{Name: "tnetns-tnode0.service", Phase: bundle.PhaseNetwork, Partition: "tnode0", Enable: true, Start: true},
		fmt.Sprintf("[Unit]\nDescription=test namespace\nRequires=tnuma-network.service\nAfter=tnuma-network.service\nPartOf=tnuma-network.service\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=%s\nExecStop=/usr/sbin/ip netns del np-tnode0\n[Install]\nWantedBy=multi-user.target\n", up))
	g.Bundle.Network = &bundle.Network{Bridge: bridge, Namespaces: []bundle.Namespace{ns}}
	return &g
}

// sandboxLinks are the links of the sandbox's own network namespace.
func sandboxLinks(t *testing.T, e *env) []string {
	t.Helper()
	ns, err := host.RootNetnsHandle(e.sb.Root)
	applytest.Must(t, err)
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	applytest.Must(t, err)
	defer h.Close()
	links, err := h.LinkList()
	applytest.Must(t, err)
	var names []string
	for _, l := range links {
		names = append(names, l.Attrs().Name)
	}
	return names
}

// TestNetworkObjectsThePlanNoLongerHasAreRemoved: a re-apply whose bridge
// is renamed removes the old bridge (the uplink's ExecStop= knows the new
// one only, and left it before the record listed it), a re-apply that
// takes a device off a partition moves it back to the host before the
// namespace's oneshot restarts (its ExecStop= would delete the namespace
// and a virtual device with it), and remove removes a recorded bridge the
// uplink's ExecStop= left.
func TestNetworkObjectsThePlanNoLongerHasAreRemoved(t *testing.T) {
	e := newEnv(t)
	base := applytest.NewFixture(1)
	gen1 := withNetwork(base, "nptbr0", "nptdev0", false)
	_, err := e.apply(t, gen1, nil)
	applytest.Must(t, err)
	links := sandboxLinks(t, e)
	if !slices.Contains(links, "nptbr0") || slices.Contains(links, "nptdev0") {
		t.Fatalf("after gen1 the sandbox has %v: want nptbr0, and nptdev0 in np-tnode0", links)
	}
	rec, err := record.Read(e.sb.Root)
	applytest.Must(t, err)
	if rec.Network == nil || strings.Join(rec.Network.Bridges, ",") != "nptbr0" || strings.Join(rec.DevicesOf("np-tnode0"), ",") != "nptdev0" {
		t.Fatalf("the record's network is %+v, want bridge nptbr0 and device nptdev0 in np-tnode0", rec.Network)
	}

	gen2 := withNetwork(base, "nptbr1", "", true)
	rep, err := e.apply(t, gen2, nil)
	applytest.Must(t, err)
	steps := strings.Join(rep.Steps, "\n")
	for _, want := range []string{"forget-network bridge nptbr0", "forget-network devices nptdev0 of namespace np-tnode0"} {
		if !strings.Contains(steps, want) {
			t.Errorf("no step %q in:\n%s", want, steps)
		}
	}
	links = sandboxLinks(t, e)
	if slices.Contains(links, "nptbr0") || !slices.Contains(links, "nptbr1") || !slices.Contains(links, "nptdev0") {
		t.Errorf("after gen2 the sandbox has %v: want nptbr1 and nptdev0 (back on the host), not nptbr0", links)
	}

	ns, err := host.RootNetnsHandle(e.sb.Root)
	applytest.Must(t, err)
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	applytest.Must(t, err)
	defer h.Close()
	// The host end of a partition's veth that outlived its namespace (a
	// process held the namespace when it was unmounted).
	attrs := netlink.NewLinkAttrs()
	attrs.Name = "np-tnode0"
	applytest.Must(t, h.LinkAdd(&netlink.Veth{LinkAttrs: attrs, PeerName: "np-tnode0x"}))

	rm, err := Remove(context.Background(), e.opts())
	applytest.Must(t, err)
	if links := sandboxLinks(t, e); slices.Contains(links, "nptbr1") || slices.Contains(links, "np-tnode0") {
		t.Errorf("after remove the sandbox still has the recorded bridge nptbr1 or host link np-tnode0: %v\n%s", links, strings.Join(rm.Actions, "\n"))
	}
	// nptdev0 is the test's NIC: remove leaves it on the host.
	if l, err := h.LinkByName("nptdev0"); err == nil {
		applytest.Must(t, h.LinkDel(l))
	}
}
