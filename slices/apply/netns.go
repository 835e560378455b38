package apply

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// dialer returns a dial function for TCP endpoints of the host at root:
// the ordinary one for "/", else one that creates its sockets in the
// network namespace of root's PID 1 (a sandbox's or a container's), so that
// status checks the kubelets where they listen.
func dialer(root string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	if filepath.Clean(root) == "/" {
		return d.DialContext
	}
	nsPath := filepath.Join(root, "proc/1/ns/net")
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		type result struct {
			c   net.Conn
			err error
		}
		ch := make(chan result, 1)
		go func() {
			// The socket is created in whatever namespace the thread is
			// in; the thread is returned to the runtime only when it is
			// back in its own namespace, else it dies with the goroutine.
			runtime.LockOSThread()
			self, err := os.Open("/proc/thread-self/ns/net")
			if err != nil {
				ch <- result{nil, err}
				return
			}
			defer self.Close()
			target, err := os.Open(nsPath)
			if err != nil {
				ch <- result{nil, err}
				return
			}
			defer target.Close()
			if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
				ch <- result{nil, fmt.Errorf("entering the network namespace of %s: %w", nsPath, err)}
				return
			}
			c, err := d.DialContext(ctx, network, addr)
			if unix.Setns(int(self.Fd()), unix.CLONE_NEWNET) == nil {
				runtime.UnlockOSThread()
			}
			ch <- result{c, err}
		}()
		r := <-ch
		return r.c, r.err
	}
}
