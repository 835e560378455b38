package main

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The test binary doubles as pause: PAUSE_TEST_MAIN=1 runs pause's main,
// saying "ready" on stderr once it catches its signals;
// PAUSE_TEST_MAIN=zombie first starts a child that exits at once and prints
// its pid, so that pause has a zombie to reap; PAUSE_TEST_MAIN=exit just exits.
func TestMain(m *testing.M) {
	switch os.Getenv("PAUSE_TEST_MAIN") {
	case "1":
		sigs := notify()
		println("ready")
		os.Exit(wait(sigs))
	case "zombie":
		child, err := os.StartProcess(os.Args[0], os.Args[:1], &os.ProcAttr{
			Env: withMode("exit"), // not "zombie" again: that would fork on and on
		})
		if err != nil {
			panic(err)
		}
		println(child.Pid) // to stderr
		main()             // never waits for child itself
	case "exit":
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// withMode returns our environment with PAUSE_TEST_MAIN=mode in place of
// any PAUSE_TEST_MAIN we have (os.StartProcess does not drop duplicates,
// and the first one wins).
func withMode(mode string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PAUSE_TEST_MAIN=") {
			env = append(env, kv)
		}
	}
	return append(env, "PAUSE_TEST_MAIN="+mode)
}

func startPause(t *testing.T, mode string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = withMode(mode)
	return cmd
}

func TestStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := startPause(t, "1")
			stderr, err := cmd.StderrPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			line, err := bufio.NewReader(stderr).ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "ready\n", line)
			// Still there after a while: it blocks.
			time.Sleep(200 * time.Millisecond)
			require.NoError(t, cmd.Process.Signal(syscall.Signal(0)), "pause exited by itself")
			require.NoError(t, cmd.Process.Signal(sig))
			assert.NoError(t, cmd.Wait(), "want exit 0 on %v", sig)
		})
	}
}

func TestReapsZombies(t *testing.T) {
	cmd := startPause(t, "zombie")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	require.NoError(t, err)
	child, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)

	// An exited child that nobody waits for stays in /proc as a zombie
	// ("State: Z"); once reaped it is gone.
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(child) + "/status")
		if os.IsNotExist(err) {
			break // reaped
		}
		require.True(t, time.Now().Before(deadline), "child %d not reaped:\n%s", child, data)
		time.Sleep(20 * time.Millisecond)
	}
	// And pause itself is still running.
	assert.NoError(t, cmd.Process.Signal(syscall.Signal(0)))
}
