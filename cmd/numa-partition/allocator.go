package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemon"
	"github.com/numa-partition/numa-partition/partition/allocator/nodecondition"
	"github.com/numa-partition/numa-partition/partition/fromplan"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
	"github.com/numa-partition/numa-partition/slices/render"
)

func allocatorCommand() *cli.Command {
	return &cli.Command{
		Name:  "allocator",
		Usage: "the per-partition memory allocator daemon (runs inside the partition's slice)",
		Subcommands: []*cli.Command{
			allocatorServeCommand(),
			allocatorResetStateCommand(),
		},
	}
}

func allocatorServeCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve one partition's allocator API on its Unix socket (systemd Type=notify)",
		Description: "Restores the partition's checkpoint, then serves /v1/admit, /v1/release/{uid},\n" +
			"/v1/allocations, /v1/state, /v1/healthz and /metrics over HTTP on a Unix socket.\n" +
			"The partition's memory comes from --allocator-config, else from the rendered\n" +
			"plan of --plan (what the unit passes), else from planning --config on the\n" +
			"machine found under --sysfs. See docs/allocator-daemon.md.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "partition", Required: true, Usage: "partition `NAME` (node0, ...)"},
			&cli.StringFlag{Name: "socket", Usage: "API socket `PATH` (default /run/numa-partition/NAME.sock)"},
			&cli.StringFlag{Name: "state-dir", Usage: "checkpoint `DIR` (default /var/lib/numa-partition/NAME)"},
			&cli.StringFlag{Name: "socket-group", Usage: "`GROUP` (name or gid) allowed on the socket besides root; the socket becomes 0660"},
			&cli.StringFlag{Name: "metrics-addr", Usage: "also serve /metrics on this TCP `HOST:PORT` (default: the plan's metricsPort on the partition's address)"},
			&cli.StringFlag{Name: "plan", Usage: "the rendered plan `FILE` (/etc/numa-partition/plan.json, what the unit passes): decide with exactly the plan that rendered this partition's kubelet; without it --config is planned anew"},
			&cli.StringFlag{Name: "allocator-config", Usage: "JSON `FILE` of the allocator configuration (nodes, policy, scope); bypasses --config"},
			&cli.StringSliceFlag{Name: "label", Usage: "node label `KEY=VALUE` of the partition, reported to `admit` for nodeSelector matching (repeatable; default: the plan's labels)"},
			&cli.BoolFlag{Name: "sync-before-answer", Usage: "answer each decision once its journal record is fdatasync'd, not once it is written (default: the plan's allocator.sync_before_answer)"},
			&cli.BoolFlag{Name: "no-node-condition", Usage: "do not write the partition's NumaPartitionDrifted condition on its Node (default: written every minute with its kubelet's kubeconfig)"},
			&cli.BoolFlag{Name: "no-nri", Usage: "do not plug into the partition's containerd through NRI (the plan's allocator.mode is then not enforced)"},
			&cli.Int64Flag{Name: "max-request-bytes", Value: daemon.DefaultMaxRequestBytes, Usage: "largest request body accepted"},
		},
		Action: func(c *cli.Context) error {
			name, err := partitionFlag(c)
			if err != nil {
				return err
			}
			opts := daemon.Options{
				Partition:        name,
				Socket:           allocStringOr(c.String("socket"), daemon.DefaultSocket(name)),
				StateDir:         allocStringOr(c.String("state-dir"), daemon.DefaultStateDir(name)),
				SocketGroup:      c.String("socket-group"),
				MetricsAddr:      c.String("metrics-addr"),
				MaxRequestBytes:  c.Int64("max-request-bytes"),
				SyncBeforeAnswer: c.Bool("sync-before-answer"),
			}
			b := currentBuild()
			opts.Version, opts.Commit = b.Version, b.Commit
			for _, f := range []string{"socket", "state-dir"} {
				if p := c.String(f); p != "" {
					if msg := validation.PathProblem(p); msg != "" {
						return fmt.Errorf("--%s %q %s", f, p, msg)
					}
				}
			}
			labels, err := allocParseLabels(c.StringSlice("label"))
			if err != nil {
				return err
			}
			opts.Labels = labels
			if file := c.String("allocator-config"); file != "" {
				cfg, err := daemon.ReadConfigFile(file)
				if err != nil {
					return err
				}
				opts.Config = cfg
				slog.Info("not writing the " + string(nodecondition.Type) + " Node condition: --allocator-config gives no plan to check against")
			} else if err := allocConfigFromPlan(c, &opts); err != nil {
				return err
			}
			return daemon.Run(c.Context, opts)
		},
	}
}

// servePlan is the rendered plan of --plan, with the machine's topology for
// the distances between its nodes, or else the plan of --config.
func servePlan(c *cli.Context) (*planner.Plan, *numa.Topology, error) {
	file := c.String("plan")
	if file == "" {
		return loadPlan(c)
	}
	plan, err := readPlanFile(file)
	if err != nil {
		return nil, nil, fmt.Errorf("the rendered plan (apply writes it): %w", err)
	}
	// readPlanFile (planner.ParsePlan) held it to the rules plan writes
	// by: the daemon makes its state dir and socket where the file says,
	// and admits against its memory.
	topo, err := numa.NewFS(globalString(c, "sysfs")).WithContext(c.Context).Discover()
	if err != nil {
		return nil, nil, fmt.Errorf("discover (for NUMA distances): %w", err)
	}
	return plan, topo, nil
}

// allocConfigFromPlan fills opts from the plan of --config on the machine
// under --sysfs (what the rendered unit runs): the same plan that rendered
// the partition's kubelet, so both decide alike. Explicit flags win over
// the plan's paths. What the plan says is read in partition/fromplan;
// here only the flags.
func allocConfigFromPlan(c *cli.Context, opts *daemon.Options) error {
	plan, topo, err := servePlan(c)
	if err != nil {
		return err
	}
	p, err := servedPartition(c, plan, opts.Partition)
	if err != nil {
		return err
	}
	set := fromplan.Explicit{
		Socket:           c.IsSet("socket"),
		StateDir:         c.IsSet("state-dir"),
		SocketGroup:      c.IsSet("socket-group"),
		SyncBeforeAnswer: c.IsSet("sync-before-answer"),
		MetricsAddr:      c.IsSet("metrics-addr"),
	}
	if err := fromplan.DaemonOptions(opts, p, topo, set); err != nil {
		return err
	}
	if task := nodeConditionTask(c, p); task != nil {
		opts.Background = append(opts.Background, task)
	}
	if c.Bool("no-nri") {
		return nil
	}
	return fromplan.NRIRuntime(opts, p, topo)
}

// servedPartition is partition name of plan, or an error that names
// where the plan came from (--plan's file, else --config's) and the
// partitions it has.
func servedPartition(c *cli.Context, plan *planner.Plan, name string) (*planner.Partition, error) {
	source := "the plan of " + globalString(c, "config")
	if file := c.String("plan"); file != "" {
		source = file // #38: named the config it never read
	}
	var names []string
	for i := range plan.Partitions {
		if plan.Partitions[i].Name == name {
			return &plan.Partitions[i], nil
		}
		names = append(names, plan.Partitions[i].Name)
	}
	return nil, fmt.Errorf("--partition %q is not in %s; planned partitions: %s", name, source, strings.Join(names, ", "))
}

// nodeConditionTask is the daemon's task that writes p's
// NumaPartitionDrifted condition on its Node (#40) in every allocator
// mode, or nil, said in one log line, when it does not run: with
// --no-node-condition, or when the plan gives p no kubelet kubeconfig
// (the Node authorizer lets a kubelet's identity patch its own Node's
// status, so the condition needs no other credentials).
func nodeConditionTask(c *cli.Context, p *planner.Partition) func(context.Context, *daemon.Server) {
	logger := slog.Default().With("partition", p.Name)
	not := "not writing the " + string(nodecondition.Type) + " Node condition"
	switch {
	case c.Bool("no-node-condition"):
		logger.Info(not + ": --no-node-condition")
		return nil
	case p.Kubelet.Kubeconfig == "" || p.NodeName == "":
		logger.Info(not + ": the plan gives the partition no kubelet kubeconfig or Node name")
		return nil
	}
	mode, err := cgroupmode.Detect(fsutil.NewRoot("/"))
	if err != nil {
		logger.Warn(not+": the slice's cpuset cannot be read", "err", err)
		return nil
	}
	set := render.SliceCpuset(p)
	o := nodecondition.Options{
		Plan:       nodecondition.Plan{Slice: p.Slice, CPUs: set.CPUs, Mems: set.Mems, Pools: render.PartitionHugepagePools(p)},
		Node:       p.NodeName,
		Kubeconfig: p.Kubelet.Kubeconfig,
		Sysfs:      globalString(c, "sysfs"),
		CgroupV2:   mode == cgroupmode.V2,
		Logger:     logger,
	}
	return func(ctx context.Context, srv *daemon.Server) {
		if observe, err := srv.ObserveDrift(); err != nil {
			logger.Warn("the drift verdict is not exported as a metric", "err", err)
		} else {
			o.Observe = observe
		}
		nodecondition.Run(ctx, o)
	}
}

func allocatorResetStateCommand() *cli.Command {
	return &cli.Command{
		Name:  "reset-state",
		Usage: "move a partition's checkpoint aside so its daemon starts with no allocations",
		Description: "The recovery for a checkpoint the daemon refuses (corrupted, or allocations that no\n" +
			"longer fit the memory). The daemon must be stopped. The old file is renamed, never\n" +
			"deleted. Pods still running keep their memory but the allocator forgets it: drain\n" +
			"the partition's node first, or re-admit its pods afterwards.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "partition", Required: true, Usage: "partition `NAME`"},
			&cli.StringFlag{Name: "state-dir", Usage: "checkpoint `DIR` (default /var/lib/numa-partition/NAME)"},
		},
		Action: func(c *cli.Context) error {
			name, err := partitionFlag(c)
			if err != nil {
				return err
			}
			dir := allocStringOr(c.String("state-dir"), daemon.DefaultStateDir(name))
			unlock, err := daemon.LockStateDir(dir)
			if err != nil {
				return fmt.Errorf("%w: stop the daemon first (systemctl stop)", err)
			}
			defer unlock()
			// The journal holds the states written since the checkpoint:
			// both are moved aside, or the daemon would start from it.
			// Below the state dir opened once, as every write (#38).
			r, err := fsutil.OpenRoot(dir)
			if err != nil {
				return fmt.Errorf("--state-dir: %w", err)
			}
			defer r.Close()
			stamp := time.Now().UTC().Format("20060102T150405Z")
			moved := 0
			for _, name := range []string{daemon.CheckpointName, daemon.JournalName} {
				if _, err := r.Lstat(name); errors.Is(err, fs.ErrNotExist) {
					continue
				}
				aside := fmt.Sprintf("%s.reset-%s", name, stamp)
				if err := r.Rename(name, aside); err != nil {
					return fmt.Errorf("moving %s aside: %w", r.Path(name), err)
				}
				fmt.Fprintf(c.App.Writer, "moved %s to %s\n", r.Path(name), r.Path(aside))
				moved++
			}
			if moved == 0 {
				return fmt.Errorf("nothing to reset: no %s or %s in %s", daemon.CheckpointName, daemon.JournalName, dir)
			}
			fmt.Fprintln(c.App.Writer, "the daemon will start with no allocations")
			return nil
		},
	}
}

// partitionFlag is --partition, "" when not given, held to the planner's
// one name rule: the name becomes a path (NAME.sock, the state dir
// /var/lib/numa-partition/NAME), and `reset-state --partition ../../etc`
// resolved to /var/etc (#38).
func partitionFlag(c *cli.Context) (string, error) {
	name := c.String("partition")
	if name == "" {
		return "", nil
	}
	if msg := validation.NameProblem(name); msg != "" {
		return "", fmt.Errorf("--partition: %s", msg)
	}
	return name, nil
}

func allocStringOr(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

func allocParseLabels(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--label %q: want KEY=VALUE", kv)
		}
		out[k] = v
	}
	return out, nil
}

// allocResourceList formats a container's memory: "memory 1Gi, hugepages-2Mi 512Mi".
func allocResourceList(m map[allocator.ResourceName]uint64) string {
	names := make([]string, 0, len(m))
	for r := range m {
		names = append(names, string(r))
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, r := range names {
		parts = append(parts, r+" "+units.FormatBytes(m[allocator.ResourceName(r)]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
