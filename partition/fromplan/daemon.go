package fromplan

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/nriplugin"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/allocator/daemon"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// What a partition's allocator daemon runs with, from its partition of
// the plan: the daemon package takes daemon.Options and never reads a
// plan, and the command that starts it only says which options its flags
// set (Explicit) and adds what needs them (the Node condition's task).

// Explicit names the daemon options set on the command line: the plan's
// never override them (an operator's --socket is where the daemon
// listens, whatever the plan says).
type Explicit struct {
	Socket, StateDir, SocketGroup, SyncBeforeAnswer, MetricsAddr bool
}

// DaemonOptions fills opts, which holds the command line's options, from
// partition p of the plan on the machine topo: the allocator's config
// (the same plan that rendered the partition's kubelet, so both decide
// alike), each node whose memory moved since the plan said in the log,
// then where the daemon listens and keeps its state (planPlaces).
func DaemonOptions(opts *daemon.Options, p *planner.Partition, topo *numa.Topology, set Explicit) error {
	cfg, err := AllocatorConfig(*p, topo)
	if err != nil {
		return err
	}
	for _, drift := range MemoryDrift(*p, topo) {
		slog.Warn(drift)
	}
	opts.Config = cfg
	planPlaces(opts, p, set)
	return nil
}

// planPlaces sets the plan's socket, state dir, group, sync, metrics
// address and labels of partition p in opts, where set does not say the
// command line gave them. They hold in every mode: without NRI (--no-nri,
// a shared runtime) the daemon listened on its defaults, root-only, where
// nothing looked for it.
func planPlaces(opts *daemon.Options, p *planner.Partition, set Explicit) {
	if !set.Socket && p.Allocator.Socket != "" {
		opts.Socket = p.Allocator.Socket
	}
	if !set.StateDir && p.Allocator.StateDir != "" {
		opts.StateDir = p.Allocator.StateDir
	}
	if !set.SocketGroup {
		opts.SocketGroup = p.Allocator.SocketGroup
	}
	if !set.SyncBeforeAnswer {
		opts.SyncBeforeAnswer = p.Allocator.SyncBeforeAnswer
	}
	if !set.MetricsAddr {
		opts.MetricsAddr = MetricsAddr(*p)
	}
	if opts.Labels == nil {
		opts.Labels = p.Labels
	}
}

// NRIRuntime plugs the daemon into partition p's containerd through NRI
// (opts.Runtime), as the plan's allocator mode says, deciding with the
// policy and scope of opts.Config (DaemonOptions sets it first); nothing
// when the plan gives p no NRI socket. In nri mode the daemon is ready
// only once the plugin has synchronized with the runtime (WaitRuntime):
// it then places every container.
func NRIRuntime(opts *daemon.Options, p *planner.Partition, topo *numa.Topology) error {
	if p.Allocator.NRISocket == "" {
		return nil
	}
	cpus, err := nriplugin.TopologyOf(*p, topo)
	if err != nil {
		return err
	}
	nriOpts := nriplugin.Options{Partition: p.Name, Name: p.Allocator.NRIPlugin, Mode: p.Allocator.Mode, Socket: p.Allocator.NRISocket, CPUs: cpus,
		Policy: opts.Config.Policy, Scope: opts.Config.Scope}
	opts.WaitRuntime = p.Allocator.Mode == config.AllocatorModeNRI
	opts.Runtime = func(ctx context.Context, srv *daemon.Server, ready func()) error {
		nriOpts.Logger, nriOpts.OnSynchronized, nriOpts.ObserveEvent = slog.Default(), ready, srv.ObserveNRIEvent
		if p.Allocator.Mode == config.AllocatorModeNRI {
			pods, err := podCache(ctx, srv, p, nriOpts.Logger)
			if err != nil {
				return err
			}
			nriOpts.Pods = pods
		}
		plugin, err := nriplugin.New(nriOpts, srv)
		if err != nil {
			return err
		}
		return plugin.Run(ctx)
	}
	return nil
}

// podCache starts, until ctx ends, the cache of partition p's Node's pods
// that the nri mode reads pods placed as one unit from, watched with the
// partition kubelet's own credentials (the Node authorizer lets it list
// and watch its pods), and exports its state as the daemon's metrics.
func podCache(ctx context.Context, srv *daemon.Server, p *planner.Partition, logger *slog.Logger) (*kubeapi.PodCache, error) {
	pods := kubeapi.NewPodCache(p.Kubelet.Kubeconfig, p.NodeName, 0, kubeapi.Options{}, logger.With("partition", p.Name))
	if err := srv.ObservePodCache(pods.Status); err != nil {
		return nil, fmt.Errorf("pod cache metrics: %w", err)
	}
	go pods.Run(ctx)
	return pods, nil
}
