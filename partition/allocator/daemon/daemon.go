package daemon

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"

	"github.com/numa-partition/numa-partition/internal/hostpaths"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
)

// Options configure Run.
type Options struct {
	Partition string
	Config    allocator.Config
	// Socket is the API's Unix socket, /run/numa-partition/NAME.sock.
	Socket string
	// SocketGroup (name or numeric gid), when set, makes the socket 0660
	// with that group and admits the group's members; otherwise 0600 root.
	SocketGroup string
	StateDir    string
	// MetricsAddr, when set, also serves /metrics (and nothing else) on
	// this TCP address: --metrics-addr, else the plan's
	// allocator.metricsPort on the partition's address
	// (fromplan.MetricsAddr), where the cluster's Prometheus
	// scrapes it.
	MetricsAddr     string
	MaxRequestBytes int64
	// SyncBeforeAnswer answers a decision once its journal record is
	// fdatasync'd, not once it is written (journal.sync says why the
	// default is safe).
	SyncBeforeAnswer bool
	// Version and Commit are the binary's, for numa_partition_build_info
	// (main's, set by the Makefile's ldflags).
	Version, Commit string
	// Labels are the partition's node labels, reported in health.
	Labels map[string]string
	Logger *slog.Logger
	// Runtime, when set, runs beside the API with the server (the NRI
	// plugin); it calls ready once it is in the containers' path. With
	// WaitRuntime the daemon reports READY=1 only then, so that a kubelet
	// ordered after it never creates a container nobody places.
	Runtime     func(ctx context.Context, srv *Server, ready func()) error
	WaitRuntime bool
	// Background tasks run beside the API in every mode, from when the
	// daemon is ready until ctx ends (the Node condition of package
	// nodecondition). They report their own trouble: nothing the daemon
	// decides waits for them, and one that returns is done.
	Background []func(ctx context.Context, srv *Server)
}

// DefaultSocket and DefaultStateDir are where a partition's daemon lives
// unless the plan says otherwise.
func DefaultSocket(partition string) string { return hostpaths.AllocatorSocket(partition) }

// DefaultStateDir is the checkpoint directory of a partition.
func DefaultStateDir(partition string) string { return hostpaths.AllocatorStateDir(partition) }

// Run serves until ctx is cancelled (SIGTERM), then shuts down gracefully.
// Under systemd (Type=notify) it reports READY=1 once the checkpoint is
// restored and the socket listens, keeps STATUS= current, pings the
// watchdog while the daemon's lock is obtainable, and reports STOPPING=1.
func Run(ctx context.Context, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	logger := opts.Logger.With("partition", opts.Partition)
	if opts.Partition == "" {
		return errors.New("--partition is required")
	}
	// The name is in the socket's and state dir's default paths.
	if msg := validation.NameProblem(opts.Partition); msg != "" {
		return fmt.Errorf("--partition: %s", msg)
	}
	if err := os.MkdirAll(opts.StateDir, 0o700); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	unlock, err := LockStateDir(opts.StateDir)
	if err != nil {
		return err
	}
	defer unlock()
	gid, err := lookupGroup(opts.SocketGroup)
	if err != nil {
		return err
	}
	srv, err := NewServer(ServerOptions{
		Partition: opts.Partition, Config: opts.Config, StateDir: opts.StateDir, Version: opts.Version, Commit: opts.Commit,
		MaxRequestBytes: opts.MaxRequestBytes, Logger: logger, Labels: opts.Labels, SyncBeforeAnswer: opts.SyncBeforeAnswer,
		OnChange: func(summary string) { notify("STATUS=" + summary) },
	})
	if err != nil {
		return err
	}
	r := &serving{srv: srv, logger: logger, errorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn), errc: make(chan error, 3)}
	if err := r.serveAPI(opts.Socket, gid); err != nil {
		return err
	}
	if err := r.serveMetrics(opts.MetricsAddr); err != nil {
		r.close()
		return err
	}
	if err := r.startRuntime(ctx, opts); err != nil {
		r.close()
		return err
	}
	notify(daemon.SdNotifyReady, "STATUS="+srv.Summary())
	logger.Info("allocator daemon ready", "socket", opts.Socket, "stateDir", opts.StateDir, "version", opts.Version)
	stopWatchdog := startWatchdog(srv, logger)
	defer stopWatchdog()
	// Stopped and waited for when Run returns: a task's last write must
	// not outlive the daemon.
	defer r.runBackground(ctx, opts.Background)()

	select {
	case <-ctx.Done():
		logger.Info("stopping")
	case err = <-r.errc:
		logger.Error("server failed", "err", err)
	}
	notify(daemon.SdNotifyStopping)
	r.shutdown()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serving is a running daemon's servers and what they report.
type serving struct {
	srv      *Server
	logger   *slog.Logger
	errorLog *log.Logger
	servers  []*http.Server
	// errc gets a server's or the runtime hook's failure, which stops
	// the daemon.
	errc chan error
}

// serveAPI serves the daemon's API on its Unix socket, to the peers the
// default policy and the socket's group let in.
func (r *serving) serveAPI(socket string, gid *uint32) error {
	policy := DefaultPeerPolicy()
	policy.Group = gid
	ln, err := listenUnix(socket, gid)
	if err != nil {
		return err
	}
	api := &http.Server{
		Handler:           r.srv.Handler(),
		ConnContext:       policy.connContext,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          r.errorLog,
	}
	r.servers = append(r.servers, api)
	go func() { r.errc <- api.Serve(ln) }()
	return nil
}

// serveMetrics serves /metrics over TCP at addr too ("" not).
func (r *serving) serveMetrics(addr string) error {
	if addr == "" {
		return nil
	}
	if err := checkMetricsAddr(addr); err != nil {
		return err
	}
	// The daemon places the partition's containers: a metrics port it
	// cannot take (held by a hostNetwork pod, an address not there) must
	// not stop that. The scrape fails (up == 0) and the log says why;
	// /metrics stays on the socket.
	mln, err := net.Listen("tcp", addr)
	if err != nil {
		r.logger.Error("not serving metrics over TCP; they are still on the socket", "address", addr, "err", err)
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle(daemonapi.PathMetrics, r.srv.MetricsHandler())
	ms := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: r.errorLog}
	r.servers = append(r.servers, ms)
	go func() { r.errc <- ms.Serve(mln) }()
	r.logger.Info("serving metrics over TCP", "address", mln.Addr().String())
	return nil
}

// startRuntime starts the runtime hook (the NRI plugin) and, with
// WaitRuntime, waits for it to synchronize before the daemon says it is
// ready.
func (r *serving) startRuntime(ctx context.Context, opts Options) error {
	if opts.Runtime == nil {
		return nil
	}
	runtimeReady := make(chan struct{})
	var once sync.Once
	go func() {
		if err := opts.Runtime(ctx, r.srv, func() { once.Do(func() { close(runtimeReady) }) }); err != nil {
			r.errc <- fmt.Errorf("runtime hook: %w", err)
		}
	}()
	if !opts.WaitRuntime {
		return nil
	}
	r.logger.Info("waiting for the runtime to synchronize before reporting ready")
	select {
	case <-runtimeReady:
	case <-ctx.Done():
	case err := <-r.errc:
		r.logger.Error("runtime hook failed", "err", err)
		return err
	}
	return nil
}

// runBackground starts the background tasks and returns what stops them
// and waits for them.
func (r *serving) runBackground(ctx context.Context, tasks []func(context.Context, *Server)) (stop func()) {
	var background sync.WaitGroup
	bgCtx, cancel := context.WithCancel(ctx)
	for _, task := range tasks {
		background.Go(func() { task(bgCtx, r.srv) })
	}
	return func() {
		cancel()
		background.Wait()
	}
}

// close closes the servers at once: a start that failed.
func (r *serving) close() {
	for _, s := range r.servers {
		_ = s.Close()
	}
}

// shutdown lets the servers finish their requests, then compacts the
// journal.
func (r *serving) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, s := range r.servers {
		if err := s.Shutdown(ctx); err != nil {
			r.logger.Warn("graceful shutdown incomplete", "err", err)
		}
	}
	if err := r.srv.Compact(); err != nil {
		r.logger.Warn("compacting the journal at stop failed; the next start reads it", "err", err)
	}
}

func notify(states ...string) {
	for _, st := range states {
		// Not under systemd (no NOTIFY_SOCKET) is (false, nil): fine.
		if _, err := daemon.SdNotify(false, st); err != nil {
			slog.Warn("sd_notify failed", "state", st, "err", err)
		}
	}
}

// startWatchdog pings systemd at a third of WatchdogSec, but only while the
// server can take its lock and is not broken: a deadlocked or wedged daemon
// stops pinging and systemd restarts it.
func startWatchdog(srv *Server, logger *slog.Logger) (stop func()) {
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		logger.Warn("watchdog configuration unreadable, watchdog off", "err", err)
		return func() {}
	}
	if interval <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(interval / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if srv.Healthy(interval / 3) {
					notify(daemon.SdNotifyWatchdog)
				} else {
					logger.Error("unhealthy, withholding the watchdog ping")
				}
			}
		}
	}()
	logger.Info("watchdog enabled", "interval", interval)
	return func() { close(done) }
}

func lookupGroup(group string) (*uint32, error) {
	if group == "" {
		return nil, nil
	}
	if n, err := strconv.ParseUint(group, 10, 32); err == nil {
		g := uint32(n)
		return &g, nil
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return nil, fmt.Errorf("--socket-group %q: %w", group, err)
	}
	n, err := strconv.ParseUint(g.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("--socket-group %q: gid %q: %w", group, g.Gid, err)
	}
	gid := uint32(n)
	return &gid, nil
}

// listenUnix creates the socket with mode 0600 (0660 and the group when
// gid is set) from the first instant: the umask covers the window between
// bind(2) and chmod(2). A stale socket file of a dead daemon is replaced;
// a live one is an error.
func listenUnix(path string, gid *uint32) (*net.UnixListener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("socket directory: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("socket path %s exists and is not a socket; refusing to replace it", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("socket %s is served by another running process", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("removing stale socket: %w", err)
		}
	}
	old := syscall.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	mode := os.FileMode(0o600)
	if gid != nil {
		if err := os.Chown(path, -1, int(*gid)); err != nil {
			ln.Close()
			return nil, fmt.Errorf("socket group: %w", err)
		}
		mode = 0o660
	}
	if err := os.Chmod(path, mode); err != nil {
		ln.Close()
		return nil, fmt.Errorf("socket mode: %w", err)
	}
	return ln, nil
}

// checkMetricsAddr refuses a metrics address that is no HOST:PORT,
// naming the flag and the forms allowed: a typo, never a passing state.
func checkMetricsAddr(addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("--metrics-addr %q: %w (want HOST:PORT, e.g. 10.0.0.2:9464, 127.0.0.1:9464 or :9464 for every address)", addr, err)
	}
	return nil
}
