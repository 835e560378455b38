// Command standin-kubelet stands in for kubelet in numa-partition's
// end-to-end test (test/e2e), where no real kubelet, API server or images
// exist. It is NOT a kubelet. It checks what a real kubelet would refuse at
// start-up and then behaves the way the e2e can observe:
//
//   - takes kubelet's command-line flags (--config, --kubeconfig,
//     --bootstrap-kubeconfig, --cert-dir, --root-dir, --hostname-override,
//     --node-labels; others are logged and ignored);
//   - strictly decodes --config as a KubeletConfiguration
//     (kubelet.config.k8s.io/v1beta1) and applies the start-up rules that
//     matter for sibling kubelets (systemd driver, cgroupRoot slice, own
//     ports, runtime endpoint, Memory Manager reservations);
//   - waits for the container runtime's socket, as kubelet does;
//   - starts one "pod" (sleep) in <cgroupRoot>/<name>-kubepods.slice through
//     systemd's D-Bus API, the way kubelet's systemd cgroup driver does,
//     on the cpuset kubelet's CPU Manager would give a best-effort pod
//     (online CPUs minus reservedSystemCPUs under strict-cpu-reservation);
//   - serves /healthz on healthzBindAddress:healthzPort.
//
// It exits non-zero with the reason when any check fails, so a broken
// rendering shows up as a failed kubelet unit.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// runtimeWait is how long the stand-in waits for the runtime's socket.
const runtimeWait = 60 * time.Second

func main() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		slog.Error("standin-kubelet failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	flags, err := parseFlags(args)
	if err != nil {
		return err
	}
	flags.log()
	cfg, err := loadConfig(flags.Config)
	if err != nil {
		return err
	}
	slice, _ := kubepodsSlice(cfg.CgroupRoot) // validated by loadConfig
	name := strings.TrimSuffix(strings.TrimPrefix(cfg.CgroupRoot, "/"), ".slice")
	slog.Info("kubelet configuration is valid", "cgroupRoot", cfg.CgroupRoot,
		"healthzPort", *cfg.HealthzPort, "runtime", cfg.ContainerRuntimeEndpoint,
		"cpuManagerPolicy", cfg.CPUManagerPolicy, "memoryManagerPolicy", cfg.MemoryManagerPolicy,
		"topologyManagerPolicy", cfg.TopologyManagerPolicy, "reservedSystemCPUs", cfg.ReservedSystemCPUs)

	sock, _ := runtimeSocket(cfg.ContainerRuntimeEndpoint) // validated by loadConfig
	if err := waitForSocket(ctx, sock, runtimeWait); err != nil {
		return fmt.Errorf("container runtime %s: %w", cfg.ContainerRuntimeEndpoint, err)
	}

	rootDir := flags.RootDir
	if rootDir == "" {
		rootDir = "/var/lib/kubelet"
	}
	online, err := onlineCPUs("/sys")
	if err != nil {
		return err
	}
	cpus, setCPUs, err := podCPUs(cfg, online)
	if err != nil {
		return err
	}
	startCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	p, err := startPod(startCtx, name, slice, cpus, setCPUs)
	cancel()
	if err != nil {
		return err
	}
	if !p.Adopted {
		if err := writePodState(rootDir, p); err != nil {
			return err
		}
	}

	addr := net.JoinHostPort(healthzHost(cfg.HealthzBindAddress), strconv.Itoa(int(*cfg.HealthzPort)))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("healthz listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	slog.Info("serving healthz", "addr", addr)
	if _, err := daemon.SdNotify(false, daemon.SdNotifyReady); err != nil {
		slog.Warn("sd_notify failed", "err", err)
	}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("healthz server: %w", err)
	}
	return nil
}

// healthzHost is kubelet's default healthzBindAddress.
func healthzHost(bind string) string {
	if bind == "" {
		return "127.0.0.1"
	}
	return bind
}

// waitForSocket dials a unix socket until it answers or the wait ends.
func waitForSocket(ctx context.Context, path string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		conn, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not reachable after %s: %w", wait, err)
		}
		slog.Info("waiting for the container runtime", "socket", path, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
