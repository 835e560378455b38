package daemon

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// PeerCred is what the kernel says about the process at the other end of a
// Unix socket, as of its connect(2) (SO_PEERCRED): it cannot be forged.
type PeerCred struct {
	PID int32
	UID uint32
	GID uint32
}

// PeerPolicy says who may use the API. The socket file's mode (0600 root,
// or 0660 with a group) is the first gate; this is the second, checked on
// every connection, so a socket made world-writable by mistake, or passed
// to another process, still does not let an unprivileged user allocate
// memory.
type PeerPolicy struct {
	// UIDs always allowed: root and the daemon's own effective uid.
	UIDs []uint32
	// Group, when set, also admits peers whose primary or supplementary
	// group is this gid (the socket's configured group).
	Group *uint32
}

// DefaultPeerPolicy admits root and the daemon's own user.
func DefaultPeerPolicy() PeerPolicy {
	p := PeerPolicy{UIDs: []uint32{0}}
	if euid := uint32(os.Geteuid()); euid != 0 {
		p.UIDs = append(p.UIDs, euid)
	}
	return p
}

// Check returns nil when cred may use the API.
func (p PeerPolicy) Check(cred PeerCred) error {
	for _, uid := range p.UIDs {
		if cred.UID == uid {
			return nil
		}
	}
	if p.Group != nil {
		if cred.GID == *p.Group {
			return nil
		}
		// SO_PEERCRED carries the primary gid only; supplementary groups
		// come from /proc. The pid is the connecting process, alive while
		// its connection is open.
		if groups, err := supplementaryGroups(cred.PID); err == nil {
			for _, g := range groups {
				if g == *p.Group {
					return nil
				}
			}
		}
		return fmt.Errorf("peer pid %d uid %d gid %d is neither root nor in group %d", cred.PID, cred.UID, cred.GID, *p.Group)
	}
	return fmt.Errorf("peer pid %d uid %d is not root", cred.PID, cred.UID)
}

// ReadPeerCred asks the kernel for the credentials of a Unix connection's peer.
func ReadPeerCred(c net.Conn) (PeerCred, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return PeerCred{}, fmt.Errorf("not a Unix socket connection (%T)", c)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return PeerCred{}, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return PeerCred{}, fmt.Errorf("peer credentials: %w", err)
	}
	if credErr != nil {
		return PeerCred{}, fmt.Errorf("peer credentials (SO_PEERCRED): %w", credErr)
	}
	return PeerCred{PID: cred.Pid, UID: cred.Uid, GID: cred.Gid}, nil
}

// maxProcStatus bounds /proc/PID/status: a few KiB, the Groups line at
// most NGROUPS_MAX (65536) ids.
const maxProcStatus = 1 << 20

func supplementaryGroups(pid int32) ([]uint32, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The kernel writes a few KiB; the bound only keeps a read finite.
	sc := bufio.NewScanner(io.LimitReader(f, maxProcStatus))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "Groups:")
		if !ok {
			continue
		}
		var groups []uint32
		for _, field := range strings.Fields(rest) {
			g, err := strconv.ParseUint(field, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("/proc/%d/status Groups %q: %w", pid, field, err)
			}
			groups = append(groups, uint32(g))
		}
		return groups, nil
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("/proc/%d/status has no Groups line", pid)
}

type peerKey struct{}

type peerResult struct {
	cred PeerCred
	err  error // credentials unreadable or not allowed
}

// connContext runs once per accepted connection (http.Server.ConnContext):
// it reads and judges the peer, and the handler wrapper enforces the verdict
// on every request of that connection.
func (p PeerPolicy) connContext(ctx context.Context, c net.Conn) context.Context {
	cred, err := ReadPeerCred(c)
	if err == nil {
		err = p.Check(cred)
	}
	return context.WithValue(ctx, peerKey{}, peerResult{cred: cred, err: err})
}

func peerFrom(ctx context.Context) (peerResult, bool) {
	r, ok := ctx.Value(peerKey{}).(peerResult)
	return r, ok
}
