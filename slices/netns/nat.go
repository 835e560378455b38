package netns

import (
	"errors"
	"fmt"
	"net"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// NATTable is the nftables table (family ip) that holds numa-partition's
// one masquerade rule. A table of its own is removed whole and never
// touches the tables of iptables, kube-proxy or the CNI.
const NATTable = "numa-partition"

// setNAT replaces the table's content with one rule, in one transaction:
//
//	table ip numa-partition {
//	  chain postrouting {
//	    type nat hook postrouting priority srcnat;
//	    ip saddr <u.NAT> oifname != <u.Bridge> masquerade
//	  }
//	}
//
// nftables rather than the iptables binaries: the host needs no userland
// tool, and the table is created and filled atomically.
func (h *Host) setNAT(u Uplink) error {
	c, err := nftables.New(nftables.WithNetNSFd(int(h.NS)))
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	defer c.CloseLasting()
	t := c.AddTable(&nftables.Table{Family: nftables.TableFamilyIPv4, Name: NATTable})
	c.FlushTable(t)
	ch := c.AddChain(&nftables.Chain{
		Name: "postrouting", Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityNATSource,
	})
	prefix := u.NAT.Masked()
	mask := net.CIDRMask(prefix.Bits(), 32)
	c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: []expr.Any{
		// ip saddr & mask == network
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: mask, Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: prefix.Addr().AsSlice()},
		// oifname != bridge (traffic between partitions keeps its source)
		&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: ifname(u.Bridge)},
		&expr.Masq{},
	}})
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nftables: writing table ip %s (masquerade %s): %w", NATTable, prefix, err)
	}
	return nil
}

// removeNAT deletes the table, when it is there.
func (h *Host) removeNAT() error {
	c, err := nftables.New(nftables.WithNetNSFd(int(h.NS)))
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	defer c.CloseLasting()
	t, err := c.ListTableOfFamily(NATTable, nftables.TableFamilyIPv4)
	if err != nil {
		if isNoEntry(err) {
			return nil
		}
		return fmt.Errorf("nftables: finding table ip %s: %w", NATTable, err)
	}
	c.DelTable(t)
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nftables: removing table ip %s: %w", NATTable, err)
	}
	return nil
}

// HasNAT reports whether the NAT table exists.
func (h *Host) HasNAT() (bool, error) {
	c, err := nftables.New(nftables.WithNetNSFd(int(h.NS)))
	if err != nil {
		return false, fmt.Errorf("nftables: %w", err)
	}
	defer c.CloseLasting()
	if _, err := c.ListTableOfFamily(NATTable, nftables.TableFamilyIPv4); err != nil {
		if isNoEntry(err) {
			return false, nil
		}
		return false, fmt.Errorf("nftables: finding table ip %s: %w", NATTable, err)
	}
	return true, nil
}

func isNoEntry(err error) bool { return errors.Is(err, unix.ENOENT) }

// ifname is an interface name as the kernel compares it: IFNAMSIZ bytes,
// NUL-padded.
func ifname(n string) []byte {
	b := make([]byte, unix.IFNAMSIZ)
	copy(b, n)
	return b
}
