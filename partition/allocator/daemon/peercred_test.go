package daemon

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPeerPolicyCheck(t *testing.T) {
	group := uint32(500)
	tests := []struct {
		name   string
		policy PeerPolicy
		cred   PeerCred
		errSub string
	}{
		{"root", PeerPolicy{UIDs: []uint32{0}}, PeerCred{PID: 1, UID: 0, GID: 0}, ""},
		{"other user", PeerPolicy{UIDs: []uint32{0}}, PeerCred{PID: 1, UID: 1000, GID: 1000}, "uid 1000 is not root"},
		{"daemon's own user", PeerPolicy{UIDs: []uint32{0, 1000}}, PeerCred{PID: 1, UID: 1000, GID: 1000}, ""},
		{"group primary", PeerPolicy{UIDs: []uint32{0}, Group: &group}, PeerCred{PID: 1, UID: 1000, GID: 500}, ""},
		// pid 0 has no /proc entry: no supplementary groups to find.
		{"not in group", PeerPolicy{UIDs: []uint32{0}, Group: &group}, PeerCred{PID: 0, UID: 1000, GID: 1000}, "neither root nor in group 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.policy.Check(tt.cred)
			if tt.errSub == "" && err != nil || tt.errSub != "" && (err == nil || !strings.Contains(err.Error(), tt.errSub)) {
				t.Fatalf("got %v, want error containing %q", err, tt.errSub)
			}
		})
	}
}

// TestReadPeerCred asks the kernel about a real connection to ourselves.
func TestReadPeerCred(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	cred, err := ReadPeerCred(server)
	if err != nil {
		t.Fatal(err)
	}
	if int(cred.PID) != os.Getpid() || int(cred.UID) != os.Geteuid() || int(cred.GID) != os.Getegid() {
		t.Fatalf("got %+v, want pid %d uid %d gid %d", cred, os.Getpid(), os.Geteuid(), os.Getegid())
	}
	groups, err := supplementaryGroups(cred.PID)
	if err != nil {
		t.Fatal(err)
	}
	own, _ := os.Getgroups()
	if len(groups) != len(own) {
		t.Fatalf("supplementary groups %v, os.Getgroups %v", groups, own)
	}
	if _, err := ReadPeerCred(&net.TCPConn{}); err == nil {
		t.Fatal("a TCP connection has no peer credentials")
	}
}
