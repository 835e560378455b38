package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// With WORKLOAD_TEST_MAIN=1 the test binary is the workload itself, so the
// tests below run the real main (signals, stdout, exit code) as a child.
func TestMain(m *testing.M) {
	if os.Getenv("WORKLOAD_TEST_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

const status = `Name:	workload
Umask:	0022
State:	S (sleeping)
Cpus_allowed:	c
Cpus_allowed_list:	2-3
Mems_allowed:	00000000,00000002
Mems_allowed_list:	1
voluntary_ctxt_switches:	1
`

func TestParseStatus(t *testing.T) {
	cpus, mems, err := parseStatus(status)
	require.NoError(t, err)
	assert.Equal(t, "2-3", cpus)
	assert.Equal(t, "1", mems) // not Mems_allowed's mask
}

func TestParseStatusMissing(t *testing.T) {
	_, _, err := parseStatus(strings.Replace(status, "Cpus_allowed_list:\t2-3\n", "", 1))
	assert.EqualError(t, err, "no Cpus_allowed_list in /proc/self/status")
	_, _, err = parseStatus(strings.Replace(status, "Mems_allowed_list:\t1", "Mems_allowed_list:\t", 1))
	assert.EqualError(t, err, "no Mems_allowed_list in /proc/self/status")
	_, _, err = parseStatus("")
	assert.Error(t, err)
}

func TestTouchBadValues(t *testing.T) {
	for _, v := range []string{"x", "-1", "1.5", "99999999999"} {
		_, err := touch(v)
		assert.ErrorContains(t, err, "TOUCH_MIB=", v)
	}
	mem, err := touch("0")
	assert.NoError(t, err)
	assert.Nil(t, mem)
}

// statusField returns one field of /proc/PID/status.
func statusField(t *testing.T, pid int, key string) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == key {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in /proc/%d/status", key, pid)
	return ""
}

// start runs the workload as a child and returns it with its first line.
func start(t *testing.T, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), append([]string{"WORKLOAD_TEST_MAIN=1"}, env...)...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	return cmd, line
}

func TestWorkloadRuns(t *testing.T) {
	cmd, line := start(t, "TOUCH_MIB=64")
	pid := os.Getpid()
	// The child inherits our affinity and cpuset, so it must report ours.
	want := fmt.Sprintf("cpus=%s mems=%s\n", statusField(t, pid, "Cpus_allowed_list"), statusField(t, pid, "Mems_allowed_list"))
	assert.Equal(t, want, line)

	// The line comes after the memory is touched: it is resident now.
	rss := statusField(t, cmd.Process.Pid, "VmRSS") // "123456 kB"
	kb, err := strconv.Atoi(strings.TrimSuffix(rss, " kB"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, kb, 64<<10, "VmRSS %s after touching 64 MiB", rss)

	// It keeps running until told to stop...
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.Signal(0)))
	// ...and SIGTERM is a clean exit.
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.NoError(t, cmd.Wait())
}

func TestWorkloadSIGINT(t *testing.T) {
	cmd, line := start(t)
	assert.Regexp(t, `^cpus=\S+ mems=\S+\n$`, line)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.NoError(t, cmd.Wait())
}

func TestBurnBadValues(t *testing.T) {
	for _, v := range []string{"x", "-1", "1.5", "2000"} {
		_, err := burn(v)
		assert.ErrorContains(t, err, "BURN_CPUS=", v)
	}
}

// cpuTicks is the process's user + system time in clock ticks
// (/proc/PID/stat fields 14 and 15).
func cpuTicks(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	utime, err := strconv.Atoi(f[11])
	require.NoError(t, err)
	stime, err := strconv.Atoi(f[12])
	require.NoError(t, err)
	return utime + stime
}

func TestWorkloadBurnsCPU(t *testing.T) {
	cmd, _ := start(t, "BURN_CPUS=1")
	// An idle workload uses next to no CPU; a burning one a CPU's worth:
	// wait (generously, on a loaded machine) for 20 ticks, 0.2 s at 100 Hz.
	busy := false
	for range 200 {
		if cpuTicks(t, cmd.Process.Pid) >= 20 {
			busy = true
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	assert.True(t, busy, "BURN_CPUS=1: %d ticks of CPU", cpuTicks(t, cmd.Process.Pid))
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.NoError(t, cmd.Wait())
}

func TestGrowBadValues(t *testing.T) {
	for _, v := range []string{"x", "0", "-1", "1.5", "5000"} {
		_, err := grow(v, io.Discard)
		assert.ErrorContains(t, err, "GROW_MIB_PER_S=", v)
	}
}

// rssKB is the process's resident memory in kB.
func rssKB(t *testing.T, pid int) int {
	t.Helper()
	kb, err := strconv.Atoi(strings.TrimSuffix(statusField(t, pid, "VmRSS"), " kB"))
	require.NoError(t, err)
	return kb
}

func TestWorkloadGrows(t *testing.T) {
	cmd, _ := start(t, "GROW_MIB_PER_S=16")
	first := rssKB(t, cmd.Process.Pid)
	// 16 MiB a second: 32 MiB more soon (waited for generously).
	grown := false
	for range 300 {
		if rssKB(t, cmd.Process.Pid) >= first+32<<10 {
			grown = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	assert.True(t, grown, "VmRSS %d kB, %d kB at the start", rssKB(t, cmd.Process.Pid), first)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.NoError(t, cmd.Wait())
}

func TestWorkloadBadTouch(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "WORKLOAD_TEST_MAIN=1", "TOUCH_MIB=lots")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, string(out), `workload: TOUCH_MIB="lots"`)
}

func TestOncePrintsTheLineAndReturns(t *testing.T) {
	var out, errOut strings.Builder
	if code := once(&out, &errOut); code != 0 {
		t.Fatalf("once exited %d: %s", code, errOut.String())
	}
	if !strings.HasPrefix(out.String(), "cpus=") || !strings.Contains(out.String(), " mems=") {
		t.Fatalf("once printed %q", out.String())
	}
}

func TestServeAnswersGet(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var out, errOut strings.Builder
	done := make(chan int, 1)
	go func() { done <- serve(&out, &errOut, addr) }()
	var got strings.Builder
	for i := 0; i < 100; i++ {
		got.Reset()
		if get(&got, io.Discard, addr) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	host, _ := os.Hostname()
	if !strings.HasPrefix(got.String(), "cpus=") || !strings.HasSuffix(got.String(), " host="+host+"\n") {
		t.Fatalf("get read %q (serve: %q %q)", got.String(), out.String(), errOut.String())
	}
	if code := get(io.Discard, io.Discard, "127.0.0.1:1"); code == 0 {
		t.Fatal("get of a closed port succeeded")
	}
	unix.Kill(os.Getpid(), unix.SIGTERM)
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d", code)
	}
}

func TestResolvePrintsAddresses(t *testing.T) {
	var out, errOut strings.Builder
	if code := resolve(&out, &errOut, "localhost"); code != 0 || !strings.Contains(out.String(), "127.0.0.1\n") {
		t.Fatalf("resolve localhost: exit %d, %q %q", code, out.String(), errOut.String())
	}
	errOut.Reset()
	if code := resolve(io.Discard, &errOut, "no-such-name.invalid"); code == 0 || !strings.Contains(errOut.String(), "no-such-name.invalid") {
		t.Fatalf("resolve of a name that does not exist: exit %d, %q", code, errOut.String())
	}
}

// each answers every operation on a line of its own, in order, an error
// in place of the answer of one that failed, and exits 1 then.
func TestEachRunsEveryOperation(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, "cpus=1 mems=0 host=backend\n")
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	var out strings.Builder
	code := each(&out, []string{"get", addr, "resolve", "localhost", "get", "127.0.0.1:1"})
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	require.Len(t, lines, 3, out.String())
	assert.Equal(t, "get "+addr+": cpus=1 mems=0 host=backend", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "resolve localhost: ") && strings.Contains(lines[1], "127.0.0.1"), lines[1])
	assert.True(t, strings.HasPrefix(lines[2], "get 127.0.0.1:1: error: "), lines[2])
	assert.Equal(t, 1, code)

	out.Reset()
	assert.Equal(t, 0, each(&out, []string{"get", addr}))
	for _, bad := range [][]string{nil, {"get"}, {"put", addr}} {
		out.Reset()
		assert.Equal(t, 2, each(&out, bad), "%q", bad)
		assert.Contains(t, out.String(), "workload each:")
	}
}
