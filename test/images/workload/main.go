// Command workload is the e2e's pod workload. It prints, as one line on
// stdout, the CPUs and memory nodes it may use, as the kernel sees them:
//
//	cpus=2-3 mems=1
//
// (Cpus_allowed_list and Mems_allowed_list of /proc/self/status, i.e. what
// the cgroup cpuset and the runtime gave the container). With TOUCH_MIB=N it
// first allocates N MiB and writes every page, so the memory is resident (and
// on the nodes the cpuset allows) before the line appears: the line means
// "ready". With BURN_CPUS=N it then keeps N CPUs busy (a CPU burner, for
// the e2e's usage figures), and with GROW_MIB_PER_S=N it touches N MiB
// more every second (a node filling slowly, for the eviction manager to
// see). It then keeps the memory and blocks until SIGTERM or SIGINT, and
// exits 0. `workload once` prints the line and exits at once: what the e2e
// runs through `kubectl exec`. `workload serve ADDR` also answers every TCP
// connection on ADDR with the line and its host name (a Service's backend),
// and `workload get ADDR` prints what ADDR answers (its client);
// `workload resolve NAME` prints NAME's addresses (cluster DNS);
// `workload each get ADDR resolve NAME ...` runs several in one process,
// a line each. Built
// static (CGO_ENABLED=0).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "once" {
		os.Exit(once(os.Stdout, os.Stderr))
	}
	if len(os.Args) == 3 && os.Args[1] == "serve" {
		os.Exit(serve(os.Stdout, os.Stderr, os.Args[2]))
	}
	if len(os.Args) == 3 && os.Args[1] == "get" {
		os.Exit(get(os.Stdout, os.Stderr, os.Args[2]))
	}
	if len(os.Args) == 3 && os.Args[1] == "resolve" {
		os.Exit(resolve(os.Stdout, os.Stderr, os.Args[2]))
	}
	if len(os.Args) >= 2 && os.Args[1] == "each" {
		os.Exit(each(os.Stdout, os.Args[2:]))
	}
	os.Exit(run(os.Stdout, os.Stderr, os.Getenv("TOUCH_MIB"), os.Getenv("BURN_CPUS"), os.Getenv("GROW_MIB_PER_S")))
}

// each runs get and resolve operations given as pairs (get ADDR resolve
// NAME ...) in this one process and prints one line per operation,
// "get ADDR: <answer>" or "resolve NAME: <addresses, space-separated>",
// with "error: ..." as the answer of one that failed; it exits 1 when
// any failed, 2 on a malformed list. Under the e2e's emulated CPU one
// `kubectl exec` costs 6-35 s: a pod's checks go through one exec, not
// one each.
func each(stdout io.Writer, args []string) int {
	if len(args) == 0 || len(args)%2 != 0 {
		fmt.Fprintln(stdout, "workload each: want pairs of get ADDR or resolve NAME")
		return 2
	}
	failed := false
	for i := 0; i < len(args); i += 2 {
		var out, errs strings.Builder
		var code int
		switch args[i] {
		case "get":
			code = get(&out, &errs, args[i+1])
		case "resolve":
			code = resolve(&out, &errs, args[i+1])
		default:
			fmt.Fprintf(stdout, "workload each: unknown operation %q (get, resolve)\n", args[i])
			return 2
		}
		answer := strings.Join(strings.Fields(out.String()), " ")
		if code != 0 {
			failed = true
			answer = "error: " + strings.TrimSpace(strings.TrimPrefix(errs.String(), "workload: "))
		}
		fmt.Fprintf(stdout, "%s %s: %s\n", args[i], args[i+1], answer)
	}
	if failed {
		return 1
	}
	return 0
}

// serve answers each connection on addr with the status line and the host
// name, until SIGTERM.
func serve(stdout, stderr io.Writer, addr string) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(stderr, "workload:", err)
		return 1
	}
	host, _ := os.Hostname()
	var line strings.Builder
	if code := once(&line, stderr); code != 0 {
		return code
	}
	answer := strings.TrimSpace(line.String()) + " host=" + host + "\n"
	fmt.Fprint(stdout, answer)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(10 * time.Second))
			io.WriteString(c, answer)
			c.Close()
		}
	}()
	<-sigs
	ln.Close()
	return 0
}

// get prints what addr answers.
func get(stdout, stderr io.Writer, addr string) int {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		fmt.Fprintln(stderr, "workload:", err)
		return 1
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(io.LimitReader(c, 4096))
	if err != nil {
		fmt.Fprintln(stderr, "workload:", err)
		return 1
	}
	stdout.Write(b)
	return 0
}

// resolve prints the addresses name resolves to, one per line, as a
// pod's programs see them: through the pod's /etc/resolv.conf (its
// search path and cluster DNS).
func resolve(stdout, stderr io.Writer, name string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, name)
	if err != nil {
		fmt.Fprintln(stderr, "workload:", err)
		return 1
	}
	for _, a := range addrs {
		fmt.Fprintln(stdout, a)
	}
	return 0
}

// once prints the CPUs and memory nodes line and returns.
func once(stdout, stderr io.Writer) int {
	status, err := os.ReadFile("/proc/self/status")
	if err == nil {
		var cpus, mems string
		if cpus, mems, err = parseStatus(string(status)); err == nil {
			fmt.Fprintf(stdout, "cpus=%s mems=%s\n", cpus, mems)
			return 0
		}
	}
	fmt.Fprintln(stderr, "workload:", err)
	return 1
}

// run does everything but exit; it returns the exit code.
func run(stdout, stderr io.Writer, touchMiB, burnCPUs, growMiB string) int {
	// Before anything else: as the container's PID 1, SIGTERM has no default
	// action, and one that arrives while we touch memory must not be lost.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT)

	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Fprintln(stderr, "workload:", err)
		return 1
	}
	cpus, mems, err := parseStatus(string(status))
	if err != nil {
		fmt.Fprintln(stderr, "workload:", err)
		return 1
	}
	mem, err := touch(touchMiB)
	if err != nil {
		fmt.Fprintln(stderr, "workload:", err)
		return 1
	}
	stop, err := burn(burnCPUs)
	if err != nil {
		fmt.Fprintln(stderr, "workload:", err)
		return 1
	}
	defer stop()
	stopGrowing, err := grow(growMiB, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "workload:", err)
		return 1
	}
	defer stopGrowing()
	fmt.Fprintf(stdout, "cpus=%s mems=%s\n", cpus, mems)
	<-sigs
	runtime.KeepAlive(mem)
	return 0
}

// grow touches mibPerS MiB more every second (empty: none) until the
// returned stop is called; what it touched is kept until the process
// ends. A failed mmap ends the growth, said on stderr.
func grow(mibPerS string, stderr io.Writer) (stop func(), err error) {
	if mibPerS == "" {
		return func() {}, nil
	}
	n, err := strconv.Atoi(mibPerS)
	if err != nil || n < 1 || n > 1<<10 {
		return nil, fmt.Errorf("GROW_MIB_PER_S=%q: want a whole number of MiB, 1 to %d", mibPerS, 1<<10)
	}
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var kept [][]byte
		for {
			select {
			case <-done:
				runtime.KeepAlive(kept)
				return
			case <-tick.C:
				mem, err := touch(strconv.Itoa(n))
				if err != nil {
					fmt.Fprintln(stderr, "workload: growing:", err)
					return
				}
				kept = append(kept, mem)
			}
		}
	}()
	return func() { close(done) }, nil
}

// burn keeps n CPUs busy (empty: none), one spinning thread each, until
// the returned stop is called.
func burn(n string) (stop func(), err error) {
	if n == "" {
		return func() {}, nil
	}
	cpus, err := strconv.Atoi(n)
	if err != nil || cpus < 0 || cpus > 1024 {
		return nil, fmt.Errorf("BURN_CPUS=%q: want a whole number of CPUs, 0 to 1024", n)
	}
	var done atomic.Bool
	for range cpus {
		go func() {
			runtime.LockOSThread()
			for !done.Load() {
			}
		}()
	}
	return func() { done.Store(true) }, nil
}

// parseStatus returns Cpus_allowed_list and Mems_allowed_list from the text
// of a /proc/PID/status file, and an error if either is missing or empty.
func parseStatus(text string) (cpus, mems string, err error) {
	for _, line := range strings.Split(text, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch key {
		case "Cpus_allowed_list":
			cpus = strings.TrimSpace(val)
		case "Mems_allowed_list":
			mems = strings.TrimSpace(val)
		}
	}
	if cpus == "" {
		return "", "", errors.New("no Cpus_allowed_list in /proc/self/status")
	}
	if mems == "" {
		return "", "", errors.New("no Mems_allowed_list in /proc/self/status")
	}
	return cpus, mems, nil
}

// touch maps mib MiB of anonymous memory (empty: none) and writes a byte to
// every page, so that each page is really allocated: the kernel backs an
// untouched, or only read, page with nothing or the shared zero page. The
// mapping is outside the Go heap, so the GC neither scans nor frees it.
func touch(mib string) ([]byte, error) {
	if mib == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(mib)
	if err != nil || n < 0 || n > 1<<20 {
		return nil, fmt.Errorf("TOUCH_MIB=%q: want a whole number of MiB, 0 to %d", mib, 1<<20)
	}
	if n == 0 {
		return nil, nil
	}
	mem, err := unix.Mmap(-1, 0, n<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("TOUCH_MIB=%d: mmap: %w", n, err)
	}
	page := os.Getpagesize()
	for i := 0; i < len(mem); i += page {
		mem[i] = 1
	}
	return mem, nil
}
