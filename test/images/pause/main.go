// Command pause is the e2e's pod sandbox image: like Kubernetes' own pause,
// it holds the pod's namespaces open by doing nothing until it is told to
// stop (SIGTERM or SIGINT, then exit 0), and as the pod's PID 1 it reaps the
// zombies that are reparented to it. Built static (CGO_ENABLED=0).
package main

import (
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
)

func main() {
	os.Exit(wait(notify()))
}

// notify starts catching the signals pause acts on. PID 1 of a PID
// namespace gets no default signal actions: without a handler SIGTERM would
// be ignored, and the runtime would wait for its timeout, then SIGKILL.
func notify() chan os.Signal {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGCHLD)
	return sigs
}

// wait reaps children on SIGCHLD until SIGTERM or SIGINT, and returns the
// exit code, 0.
func wait(sigs chan os.Signal) int {
	// A child may have exited before notify; its SIGCHLD is gone.
	reap()
	for s := range sigs {
		if s != unix.SIGCHLD {
			return 0
		}
		reap() // SIGCHLDs coalesce, so reap them all
	}
	return 0
}

// reap collects every exited child without blocking. pause starts no
// children of its own, so any child it has was reparented to it (it is PID
// 1) or started by whoever exec'd it; none is anyone else's to wait for.
func reap() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if err == unix.EINTR {
			continue
		}
		if pid <= 0 || err != nil { // 0: children left but none exited; ECHILD: none left
			return
		}
	}
}
