package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"golang.org/x/sys/unix"
)

// pod is the "pod" the stand-in runs, as recorded in
// <root-dir>/standin-kubelet/pod.json for the e2e scenario.
type pod struct {
	Slice   string `json:"slice"` // node0-kubepods.slice
	Scope   string `json:"scope"` // standin-pod-node0.scope
	PID     int    `json:"pid"`
	Adopted bool   `json:"adopted"` // found running from an earlier start
	// CPUs is the cpuset the CPU Manager gave the pod ("" when kubelet
	// would set none).
	CPUs string `json:"cpus,omitempty"`
}

// startPod does what kubelet's systemd cgroup driver and the runtime do for
// a pod, reduced to its placement: create the kubepods slice as a
// transient unit under cgroupRoot, start a process, and move it into a
// transient scope in that slice. systemd then applies the partition
// slice's AllowedCPUs/AllowedMemoryNodes to it, which is what the e2e
// checks. cpus, when set, is the CPU Manager's cpuset for the pod: it goes
// on the scope as AllowedCPUs (what runc does on cgroup v2) and on the
// process as its affinity (enforced on v1 too). A scope left running by an
// earlier start is adopted, as kubelet adopts its running pods after a
// restart.
func startPod(ctx context.Context, name, slice string, cpus bitmask.CPUSet, setCPUs bool) (pod, error) {
	p := pod{Slice: slice, Scope: "standin-pod-" + name + ".scope"}
	if setCPUs {
		p.CPUs = cpus.String()
	}
	conn, err := sddbus.NewWithContext(ctx)
	if err != nil {
		return p, fmt.Errorf("connecting to systemd: %w", err)
	}
	defer conn.Close()

	if active, err := unitActive(ctx, conn, p.Scope); err != nil {
		return p, err
	} else if active {
		p.Adopted = true
		slog.Info("pod already running, adopting it", "scope", p.Scope)
		return p, nil
	}

	err = runJob(ctx, slice, func(ch chan<- string) error {
		_, err := conn.StartTransientUnitContext(ctx, slice, "replace", []sddbus.Property{
			sddbus.PropDescription("stand-in kubelet pods of " + name),
			{Name: "DefaultDependencies", Value: godbus.MakeVariant(false)},
		}, ch)
		return err
	})
	var dbusErr godbus.Error
	if errors.As(err, &dbusErr) && dbusErr.Name == "org.freedesktop.systemd1.UnitExists" {
		// A unit file (or an earlier run) defines it already: kubelet's
		// driver treats this the same way.
		slog.Info("kubepods slice exists", "slice", slice)
		err = nil
	}
	if err != nil {
		return p, fmt.Errorf("creating %s: %w", slice, err)
	}

	cmd := exec.Command("/bin/sleep", "infinity")
	if err := cmd.Start(); err != nil {
		return p, fmt.Errorf("starting the pod process: %w", err)
	}
	p.PID = cmd.Process.Pid
	go func() {
		err := cmd.Wait()
		slog.Warn("pod process exited", "pid", p.PID, "err", err)
	}()
	props := []sddbus.Property{
		sddbus.PropDescription("stand-in pod of " + name),
		sddbus.PropSlice(slice),
		sddbus.PropPids(uint32(p.PID)),
		{Name: "DefaultDependencies", Value: godbus.MakeVariant(false)},
	}
	if setCPUs {
		props = append(props, sddbus.Property{Name: "AllowedCPUs", Value: godbus.MakeVariant(cpuMask(cpus))})
	}
	err = runJob(ctx, p.Scope, func(ch chan<- string) error {
		_, err := conn.StartTransientUnitContext(ctx, p.Scope, "replace", props, ch)
		return err
	})
	if err != nil {
		_ = cmd.Process.Kill()
		return p, fmt.Errorf("moving pod process %d into %s: %w", p.PID, p.Scope, err)
	}
	cg, err := conn.GetUnitTypePropertyContext(ctx, p.Scope, "Scope", "ControlGroup")
	if err != nil {
		return p, fmt.Errorf("reading the cgroup of %s: %w", p.Scope, err)
	}
	cgPath, _ := cg.Value.Value().(string)
	joined, err := joinCpusetV1("/sys/fs/cgroup", cgPath, p.PID, cpus, setCPUs)
	if err != nil {
		_ = cmd.Process.Kill()
		return p, err
	}
	// Affinity last, as runc does: only inside the pod's own cgroup are
	// the pod's CPUs allowed (the kubelet's cgroup may hold other ones).
	if setCPUs {
		var set unix.CPUSet
		for _, id := range cpus.IDs() {
			set.Set(id)
		}
		if err := unix.SchedSetaffinity(p.PID, &set); err != nil {
			_ = cmd.Process.Kill()
			return p, fmt.Errorf("setting pod CPU affinity %s: %w", cpus, err)
		}
	}
	slog.Info("pod started", "scope", p.Scope, "slice", slice, "pid", p.PID, "cpus", p.CPUs, "cgroup", cgPath, "cpusetV1", joined)
	return p, nil
}

// runJob starts a systemd job and waits for its result.
func runJob(ctx context.Context, unit string, start func(ch chan<- string) error) error {
	ch := make(chan string, 1)
	if err := start(ch); err != nil {
		return err
	}
	select {
	case res := <-ch:
		if res != "done" {
			return fmt.Errorf("job for %s finished with %q", unit, res)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the job of %s: %w", unit, ctx.Err())
	}
}

func unitActive(ctx context.Context, conn *sddbus.Conn, unit string) (bool, error) {
	prop, err := conn.GetUnitPropertyContext(ctx, unit, "ActiveState")
	if err != nil {
		return false, fmt.Errorf("reading ActiveState of %s: %w", unit, err)
	}
	state, _ := prop.Value.Value().(string)
	return state == "active", nil
}

// writePodState records the pod for whoever checks placement.
func writePodState(rootDir string, p pod) error {
	dir := filepath.Join(rootDir, "standin-kubelet")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding pod state: %w", err)
	}
	path := filepath.Join(dir, "pod.json")
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
