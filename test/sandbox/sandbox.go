// Package sandbox boots a real, throw-away systemd for integration tests:
// the host's systemd as PID 1 in fresh namespaces over an overlay of /
// (sandbox.sh, inner.sh). Tests on the host drive it over its system bus and
// reach its file system at /proc/<pid1>/root, so the code under test runs
// exactly as it would against the host's systemd, with --root pointing there.
//
// Use Main from TestMain to share one sandbox per test binary, and Get in
// tests; without root or systemd, Get skips with a loud "NOT RUN" message.
package sandbox

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/numa-partition/numa-partition/slices/systemd"
)

//go:embed sandbox.sh
var sandboxScript []byte

//go:embed inner.sh
var innerScript []byte

// BootTimeout bounds the boot: namespaces, overlay, systemd to "running".
const BootTimeout = 60 * time.Second

// Sandbox is one running sandboxed systemd.
type Sandbox struct {
	Name string
	PID1 int    // systemd's PID in the host's PID namespace
	Root string // its root file system, seen from the host
	Bus  string // its system bus address, usable from the host
	// Boot is how long it took from launch to a settled system state.
	Boot time.Duration

	state  string // host directory with the scripts and console.log
	cmd    *exec.Cmd
	exited chan struct{}
	once   sync.Once
}

// Available says why a sandbox cannot run here, or nil.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("needs root (CAP_SYS_ADMIN for namespaces, mounts and cgroups)")
	}
	for _, bin := range []string{"/lib/systemd/systemd", "/usr/bin/dbus-daemon"} {
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("needs systemd and dbus (apt-get install systemd dbus): %w", err)
		}
	}
	for _, bin := range []string{"unshare", "setpriv", "nsenter"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("needs util-linux: %w", err)
		}
	}
	return nil
}

// Start boots a sandbox and waits until its systemd has settled (running
// or degraded). The caller must Stop it; if the calling process dies the
// sandbox dies too (parent-death signal on the launcher, --kill-child on
// PID 1).
func Start(ctx context.Context) (*Sandbox, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, BootTimeout)
	defer cancel()
	state, err := os.MkdirTemp("", "npsandbox-")
	if err != nil {
		return nil, err
	}
	for name, b := range map[string][]byte{"sandbox.sh": sandboxScript, "inner.sh": innerScript} {
		if err := os.WriteFile(filepath.Join(state, name), b, 0o755); err != nil {
			return nil, err
		}
	}
	sweep(state) // cgroups of sandboxes whose test binary was killed
	s := &Sandbox{Name: uniqueName(), state: state, exited: make(chan struct{})}
	t0 := time.Now()
	if err := s.launch(); err != nil {
		return nil, err
	}
	if err := s.waitBoot(ctx); err != nil {
		log, _ := os.ReadFile(filepath.Join(state, "launcher.log"))
		cons, _ := os.ReadFile(filepath.Join(state, "console.log"))
		s.Stop()
		return nil, fmt.Errorf("sandbox %s did not boot: %w\nlauncher:\n%s\nconsole (tail):\n%s", s.Name, err, log, tail(cons, 40))
	}
	s.Boot = time.Since(t0)
	return s, nil
}

func uniqueName() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b))
}

// launch starts sandbox.sh launch on a locked OS thread that lives as long
// as the sandbox: the parent-death signal fires when that thread exits.
func (s *Sandbox) launch() error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the sandbox
		logf, err := os.Create(filepath.Join(s.state, "launcher.log"))
		if err != nil {
			started <- err
			return
		}
		defer logf.Close()
		cmd := exec.Command(filepath.Join(s.state, "sandbox.sh"), "launch", s.Name, s.state)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("launching sandbox: %w", err)
			return
		}
		s.cmd = cmd
		started <- nil
		_ = cmd.Wait()
		close(s.exited)
	}()
	return <-started
}

func (s *Sandbox) waitBoot(ctx context.Context) error {
	// PID 1 is unshare's only child (the launcher execs unshare).
	// Before the exec, the launcher's children are its helpers (mkdir, awk):
	// take only a child that is PID 1 of its own namespace.
	children := fmt.Sprintf("/proc/%d/task/%d/children", s.cmd.Process.Pid, s.cmd.Process.Pid)
	for s.PID1 == 0 {
		if b, err := os.ReadFile(children); err == nil {
			for _, c := range strings.Fields(string(b)) {
				if isNamespacePID1(c) {
					s.PID1, _ = strconv.Atoi(c)
				}
			}
		}
		if err := s.pause(ctx); err != nil {
			return fmt.Errorf("waiting for PID 1: %w", err)
		}
	}
	s.Root = fmt.Sprintf("/proc/%d/root", s.PID1)
	sock := filepath.Join(s.Root, "run/dbus/system_bus_socket")
	s.Bus = "unix:path=" + sock
	for {
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			break
		}
		if err := s.pause(ctx); err != nil {
			return fmt.Errorf("waiting for %s: %w", sock, err)
		}
	}
	var last string
	for {
		if st, err := s.systemState(ctx); err == nil {
			last = st
			if st == "running" || st == "degraded" {
				return nil
			}
		} else {
			last = err.Error()
		}
		if err := s.pause(ctx); err != nil {
			return fmt.Errorf("waiting for system state running (last: %s): %w", last, err)
		}
	}
}

// isNamespacePID1 says whether the process's innermost PID is 1.
func isNamespacePID1(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && k == "NSpid" {
			f := strings.Fields(v)
			return len(f) > 1 && f[len(f)-1] == "1"
		}
	}
	return false
}

func (s *Sandbox) systemState(ctx context.Context) (string, error) {
	c, err := systemd.Connect(s.Bus)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.SystemState(ctx)
}

// pause waits a moment, failing when the sandbox died or ctx ended.
func (s *Sandbox) pause(ctx context.Context) error {
	select {
	case <-s.exited:
		return errors.New("the sandbox exited")
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(50 * time.Millisecond):
		return nil
	}
}

// Connect opens a D-Bus connection to the sandbox's systemd.
func (s *Sandbox) Connect() (*systemd.Conn, error) {
	return systemd.Connect(s.Bus)
}

// Path is a path of the sandbox's file system as seen from the host.
func (s *Sandbox) Path(p string) string { return filepath.Join(s.Root, p) }

// Exec runs a command inside the sandbox's namespaces.
func (s *Sandbox) Exec(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.state, "sandbox.sh"),
		append([]string{"exec", strconv.Itoa(s.PID1)}, args...)...)
	return cmd.CombinedOutput()
}

// Stop powers the sandbox off (SIGKILL after 30 s), removes its cgroups and
// its state directory. It is safe to call more than once.
func (s *Sandbox) Stop() error {
	var err error
	s.once.Do(func() {
		if s.cmd != nil && s.PID1 != 0 {
			// SIGRTMIN+4 is systemd's "poweroff" signal.
			_ = syscall.Kill(s.PID1, syscall.Signal(34+4))
		}
		if s.cmd != nil {
			select {
			case <-s.exited:
			case <-time.After(30 * time.Second):
				_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
				<-s.exited
			}
		}
		out, cerr := exec.Command(filepath.Join(s.state, "sandbox.sh"), "cleanup", s.Name).CombinedOutput()
		if cerr != nil || len(out) > 0 {
			err = fmt.Errorf("sandbox %s cleanup: %v: %s", s.Name, cerr, out)
		}
		if rerr := os.RemoveAll(s.state); rerr != nil && err == nil {
			err = rerr
		}
	})
	return err
}

func sweep(state string) {
	_ = exec.Command(filepath.Join(state, "sandbox.sh"), "sweep").Run()
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

var (
	shared    *Sandbox
	sharedErr error
)

// Main runs a package's tests with one shared sandbox, booted before and
// stopped after them even when tests fail. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(sandbox.Main(m)) }
func Main(m *testing.M) int {
	if err := Available(); err != nil {
		sharedErr = err
		fmt.Fprintf(os.Stderr, "\n*** NOT RUN: the real-systemd tests of this package: %v ***\n\n", err)
		return m.Run()
	}
	shared, sharedErr = Start(context.Background())
	if sharedErr != nil {
		fmt.Fprintf(os.Stderr, "sandbox: %v\n", sharedErr)
		return 1 // root and systemd are here: a failed boot is a failure
	}
	defer func() {
		if err := shared.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
		}
	}()
	return m.Run()
}

// Get returns the shared sandbox of Main, or skips the test loudly.
func Get(t testing.TB) *Sandbox {
	t.Helper()
	if shared == nil {
		err := sharedErr
		if err == nil {
			err = errors.New("sandbox.Main was not called from TestMain")
		}
		t.Skipf("NOT RUN: needs root + systemd: %v", err)
	}
	return shared
}
