// Package nriplugin puts the partition's allocator in the containers'
// path: an NRI plugin on the partition's own containerd that sees every
// pod sandbox and container, admits each container when it is created,
// releases it when it stops, and on every (re)connection synchronizes
// with the containers that exist. Two modes (docs/allocator.md):
//
//   - kubelet: kubelet's CPU, Memory and Topology Managers decide; the
//     plugin mirrors their cpusets into the allocator's state and logs any
//     container placed other than its own policy would have.
//   - nri: kubelet's managers are off; the plugin decides with the
//     allocator (memory and hugepages on the fewest NUMA nodes, the
//     topology policy) and enforces it: cpuset.mems, exclusive whole
//     cores for Guaranteed containers with integer CPUs, the shared pool
//     for the rest. A container that cannot be placed fails to start with
//     an error naming the pod, its resources and the policy.
package nriplugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/containerd/nri/pkg/stub"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/allocator"
)

// Modes.
const (
	ModeKubelet = "kubelet"
	ModeNRI     = "nri"
)

// Placer is the allocator daemon (daemon.Server) as the plugin uses it.
type Placer interface {
	AdmitPod(*corev1.Pod, allocator.Hints) (allocator.Decision, error)
	// EvaluatePod is AdmitPod's decision, neither kept nor written.
	EvaluatePod(*corev1.Pod, allocator.Hints) (allocator.Decision, error)
	AdoptPod(*corev1.Pod, map[string]bitmask.NodeSet) (allocator.Decision, error)
	ReleasePod(types.UID) (bool, error)
	Allocations() []allocator.Allocation
}

// Options configure a Plugin.
type Options struct {
	Partition string
	// Name is the plugin's name at containerd, as the plan names it
	// (planner.Allocator.NRIPlugin): in nri mode the partition's
	// containerd refuses to create a container while no plugin of this
	// name is connected.
	Name string
	Mode string // ModeKubelet (default) or ModeNRI
	// Socket is the partition's containerd NRI socket.
	Socket string
	CPUs   CPUTopology
	// Policy and Scope name the topology policy in errors.
	Policy string
	Scope  string
	// Pods reads pods from the API server, with the partition kubelet's
	// credentials: the plugin needs a whole pod to place it as one unit
	// (nri mode: pod scope, and virt-launcher pods). Required for pod
	// scope; without it a virt-launcher pod cannot be placed.
	Pods   PodReader
	Logger *slog.Logger
	// OnSynchronized is called after every synchronization with the
	// runtime: from then on the plugin is in the containers' path.
	OnSynchronized func()
	// ObserveEvent, when set, is told how long the plugin took to answer
	// each event (one of the Event names): containerd waits for the
	// answer, and handles one event at a time, so it is what the plugin
	// adds to a container's creation on top of NRI's own round trip.
	ObserveEvent func(event string, took time.Duration)
}

// The events the plugin answers, as ObserveEvent names them.
const (
	EventSynchronize      = "synchronize"
	EventCreateContainer  = "create_container"
	EventStopContainer    = "stop_container"
	EventRemoveContainer  = "remove_container"
	EventStopPodSandbox   = "stop_pod_sandbox"
	EventRemovePodSandbox = "remove_pod_sandbox"
)

// observe reports an event's time since start (deferred at the top of
// each handler).
func (p *Plugin) observe(event string, start time.Time) {
	if p.opts.ObserveEvent != nil {
		p.opts.ObserveEvent(event, time.Since(start))
	}
}

// Plugin is one partition's NRI plugin.
type Plugin struct {
	opts   Options
	placer Placer
	log    *slog.Logger

	mu         sync.Mutex
	stub       stub.Stub // the current connection, for updates no event asked for
	pool       *cpuPool
	containers map[string]*tracked // by container id
	units      map[types.UID]*unit // pods placed as one unit, by pod uid
}

// tracked is a container the plugin has seen start and not yet stop.
type tracked struct {
	c    container
	unit *unit // the unit it is a part of; nil when placed on its own
}

// New checks the options.
func New(opts Options, placer Placer) (*Plugin, error) {
	switch opts.Mode {
	case "":
		opts.Mode = ModeKubelet
	case ModeKubelet, ModeNRI:
	default:
		return nil, fmt.Errorf("mode %q: allowed are %s, %s", opts.Mode, ModeKubelet, ModeNRI)
	}
	if opts.Name == "" {
		return nil, errors.New("the plugin's name at containerd is missing: Options.Name")
	}
	if opts.Mode == ModeNRI && opts.Scope == allocator.ScopePod && opts.Pods == nil {
		return nil, errors.New("nri mode in pod scope places each pod as one unit and needs the pod specs: Options.Pods")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	pool, err := newCPUPool(opts.CPUs)
	if err != nil {
		return nil, err
	}
	return &Plugin{opts: opts, placer: placer, pool: pool, containers: map[string]*tracked{},
		units: map[types.UID]*unit{},
		log:   opts.Logger.With("partition", opts.Partition, "nri", opts.Mode)}, nil
}

// Run connects to containerd's NRI socket and serves until ctx ends,
// reconnecting (and so synchronizing again) whenever containerd restarts.
func (p *Plugin) Run(ctx context.Context) error {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		s, err := stub.New(p, stub.WithPluginName(p.opts.Name), stub.WithPluginIdx("10"),
			stub.WithSocketPath(p.opts.Socket))
		if err != nil {
			return fmt.Errorf("nri plugin: %w", err)
		}
		p.mu.Lock()
		p.stub = s
		p.mu.Unlock()
		started := time.Now()
		err = s.Run(ctx)
		if ctx.Err() != nil {
			s.Stop()
			return nil
		}
		if time.Since(started) > 10*time.Second {
			backoff = 100 * time.Millisecond
		}
		p.log.Warn("NRI connection ended, reconnecting", "socket", p.opts.Socket, "err", err, "in", backoff)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
	return nil
}

// pushSharedUpdates moves the shared containers to the current shared
// pool outside of any event (after CPUs were freed by a sandbox event).
func (p *Plugin) pushSharedUpdates() {
	p.mu.Lock()
	s, updates := p.stub, p.sharedUpdates()
	p.mu.Unlock()
	if s == nil || len(updates) == 0 {
		return
	}
	failed, err := s.UpdateContainers(updates)
	if err != nil || len(failed) > 0 {
		p.log.Warn("shared pool update not applied", "containers", len(updates), "failed", len(failed), "err", err)
	}
}

// errPlacement marks a container the policy cannot place.
var errPlacement = errors.New("cannot be placed")
