package nodecondition

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/slices/drift"
)

// Defaults of Options.
const (
	DefaultInterval = time.Minute
	// DefaultLogEvery spaces the warnings of a failing write: an API
	// server down for an hour, or a kubelet still in its TLS bootstrap,
	// says so once every few minutes, not every minute.
	DefaultLogEvery = 5 * time.Minute
	// requestTimeout bounds one read or write of the Node: the next
	// check comes a minute later anyway.
	requestTimeout = 15 * time.Second
)

// Options are one partition's loop.
type Options struct {
	Plan Plan
	// Node is the partition's Node name; Kubeconfig its kubelet's
	// kubeconfig, read again at every write (kubelet rotates its client
	// certificate, and writes the file only once its TLS bootstrap is
	// done).
	Node       string
	Kubeconfig string
	// Root is where the cgroup tree is ("/"), Sysfs the sysfs the NUMA
	// nodes are read from (/sys); CgroupV2 whether the host is unified.
	Root     string
	Sysfs    string
	CgroupV2 bool
	// Interval between checks (DefaultInterval); Tick, when set, replaces
	// the ticker (tests). The first check is at once.
	Interval time.Duration
	Tick     <-chan time.Time
	// Now is the clock of the condition's times (time.Now).
	Now      func() time.Time
	LogEvery time.Duration
	Logger   *slog.Logger
	// Observe, when set, is told every verdict (the daemon's gauge).
	Observe func(drifted bool)
	// Written, when set, is told every write's outcome (tests).
	Written func(corev1.NodeCondition, error)
}

// Check reads the partition's slice and pools and returns the verdict.
func Check(o Options) corev1.NodeCondition {
	obs := Observed{Cpuset: drift.ReadEffectiveCpuset(fsutil.NewRoot(o.Root), o.CgroupV2, o.Plan.Slice)}
	if topo, err := numa.NewFS(o.Sysfs).Discover(); err != nil {
		obs.NodesErr = err
	} else {
		obs.Nodes = drift.NodePools(topo)
	}
	return Verdict(o.Plan, obs)
}

// Run checks at once and then every interval until ctx ends, writing the
// verdict on the Node. A write that fails (no kubeconfig yet, the API
// down, the Node not registered yet) is retried at the next check and
// warned about at most once every LogEvery; nothing else waits for it.
func Run(ctx context.Context, o Options) {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.LogEvery <= 0 {
		o.LogEvery = DefaultLogEvery
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Root == "" {
		o.Root = "/"
	}
	tick := o.Tick
	if tick == nil {
		t := time.NewTicker(o.Interval)
		defer t.Stop()
		tick = t.C
	}
	o.Logger.Info("writing the "+string(Type)+" condition on the partition's Node", "node", o.Node, "interval", o.Interval)
	w := writer{o: o}
	for {
		w.once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
	}
}

// writer is the loop's state: what it last wrote and when it last
// warned.
type writer struct {
	o       Options
	last    corev1.ConditionStatus
	warned  time.Time
	failing bool
}

func (w *writer) once(ctx context.Context) {
	now := w.o.Now()
	c := Check(w.o)
	drifted := c.Status == corev1.ConditionTrue
	if w.o.Observe != nil {
		w.o.Observe(drifted)
	}
	if c.Status != w.last {
		// A change of verdict is worth a line of its own, written or not.
		log := w.o.Logger.Info
		if drifted {
			log = w.o.Logger.Warn
		}
		log("partition drift verdict", "condition", string(Type), "status", string(c.Status), "reason", c.Reason, "message", c.Message)
		w.last = c.Status
	}
	written, err := w.write(ctx, c, now)
	switch {
	case err != nil && (!w.failing || now.Sub(w.warned) >= w.o.LogEvery):
		w.o.Logger.Warn("could not write the Node condition; retrying every interval (allocations go on)",
			"node", w.o.Node, "condition", string(Type), "err", err, "nextWarningIn", w.o.LogEvery)
		w.failing, w.warned = true, now
	case err == nil && w.failing:
		w.o.Logger.Info("writing the Node condition again", "node", w.o.Node, "condition", string(Type))
		w.failing = false
	}
	if w.o.Written != nil {
		w.o.Written(written, err)
	}
}

// write loads the kubeconfig and sets the condition.
func (w *writer) write(ctx context.Context, c corev1.NodeCondition, now time.Time) (corev1.NodeCondition, error) {
	cfg, err := kubeapi.Load("/", w.o.Kubeconfig)
	if err != nil {
		return corev1.NodeCondition{}, err
	}
	client := kubeapi.NewClient(cfg, kubeapi.Options{Timeout: requestTimeout})
	defer client.Close()
	return client.SetNodeCondition(ctx, w.o.Node, c, now)
}
