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
	return dialerIn(rootNetns(root))
}

// rootNetns is the network namespace of the host at root: this process's
// for "/", else that of root's PID 1 (a sandbox's or a container's).
func rootNetns(root string) string {
	if filepath.Clean(root) == "/" {
		return "/proc/self/ns/net"
	}
	return filepath.Join(root, "proc/1/ns/net")
}

// dialerIn dials from the network namespace at nsPath (a partition's
// /run/netns/<name>, where its kubelet listens on 127.0.0.1).
func dialerIn(nsPath string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (c net.Conn, err error) {
		nsErr := inNetns(nsPath, func() { c, err = d.DialContext(ctx, network, addr) })
		if nsErr != nil {
			return nil, nsErr
		}
		return c, err
	}
}

// inNetns runs f on a thread of its own in the network namespace at
// nsPath: sockets are created in whatever namespace their thread is in.
// The thread goes back to the runtime only once it is back in its own
// namespace, else it dies with its goroutine.
func inNetns(nsPath string, f func()) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			done <- err
			return
		}
		defer self.Close()
		target, err := os.Open(nsPath)
		if err != nil {
			done <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("entering the network namespace of %s: %w", nsPath, err)
			return
		}
		f()
		if unix.Setns(int(self.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- nil
	}()
	return <-done
}
