package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/internal/hostpaths"
	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
	"github.com/numa-partition/numa-partition/slices/nodeview"
)

// The view commands' shared flags.
func viewSliceFlag() cli.Flag {
	return &cli.StringFlag{Name: "slice", Required: true, Usage: "the partition's slice, e.g. node0.slice"}
}

func viewRootFlag() cli.Flag {
	return &cli.StringFlag{Name: "root", Value: "/", Usage: "the host's root directory (a test sandbox's works)"}
}

func viewNodesFlag() cli.Flag {
	return &cli.StringFlag{Name: "nodes", Required: true, Usage: "the partition's NUMA nodes, e.g. 0-1"}
}

// viewCommand makes a partition's kubelet see the partition as its
// machine; each subcommand is one step of that, run by the rendered units.
func viewCommand() *cli.Command {
	return &cli.Command{
		Name:  "view",
		Usage: "show a partition's kubelet its partition as the machine (run by the rendered mountns-<partition>.service)",
		Subcommands: []*cli.Command{
			viewHoldCommand(),
			viewCheckOpenat2Command(),
			viewNodesCommand(),
			viewHugepagesCommand(),
			viewMountCommand(),
			viewServeCommand(),
		},
	}
}

// viewHoldCommand is mountns-<partition>.service's main process: it holds
// the namespace kubelet's machine is made in.
func viewHoldCommand() *cli.Command {
	return &cli.Command{
		Name:  "hold",
		Usage: "hold a partition's mount namespace and show its kubelet the partition's usage and memory, until stopped",
		Description: "The main process of mountns-<partition>.service, inside the namespace systemd\n" +
			"made for it. It makes the usage binds of `view mount` (cgroup v1; with --unified\n" +
			"also cgroup v2's), then, with\n" +
			"--meminfo, serves over the namespace's /proc/meminfo the memory of the NUMA\n" +
			"nodes the namespace's /sys/devices/system/node lists (those `view nodes` left),\n" +
			"live through FUSE: cAdvisor's MemTotal, the Node's memory capacity and what\n" +
			"memory.available is measured against; on cgroup v1 also the root memory\n" +
			"cgroup's usage files, made from those nodes' figures (the Node's memory usage\n" +
			"and working set: memory.available falls when its nodes fill). It tells systemd it is ready\n" +
			"(Type=notify) once all is in place, before containerd and kubelet join, and\n" +
			"serves until SIGTERM. See docs/architecture.md, \"Each kubelet's machine\".",
		Flags: []cli.Flag{
			viewSliceFlag(),
			&cli.BoolFlag{Name: "meminfo", Usage: "serve the shown nodes' /proc/meminfo (without it the host's stays)"},
			&cli.BoolFlag{Name: "unified", Usage: "also bind the slice's cgroup v2 usage files over the root's (for a kubelet whose unit hides openat2: `view check-openat2`)"},
			viewRootFlag(),
		},
		Action: func(c *cli.Context) error {
			return viewHold(c.Context, c.App.Writer, c.String("root"), c.String("slice"), holdViews{meminfo: c.Bool("meminfo"), unified: c.Bool("unified")})
		},
	}
}

// viewCheckOpenat2Command is a cgroup v2 kubelet's first ExecStartPre=: it
// stops a kubelet that would report a usage of 0.
func viewCheckOpenat2Command() *cli.Command {
	return &cli.Command{
		Name:  "check-openat2",
		Usage: "fail unless openat2(2) answers ENOSYS here, as a cgroup v2 kubelet's unit asks (its first ExecStartPre=)",
		Description: "On cgroup v2 kubelet's cgroup library refuses the slice's usage files bound over\n" +
			"the root cgroup's when it opens them with openat2, and opens them by path where\n" +
			"openat2 does not exist: the kubelet's unit hides it (SystemCallFilter=~openat2).\n" +
			"systemd ignores a name its libseccomp does not know, and kubelet would then report\n" +
			"a usage of 0: this stops the kubelet first, saying why. See docs/architecture.md,\n" +
			"\"Each kubelet's machine\".",
		Action: func(c *cli.Context) error {
			return nodeview.CheckOpenat2Hidden()
		},
	}
}

// viewNodesCommand is kubelet-<partition>.service's ExecStartPre=: it cuts
// the node directories kubelet reads to the partition's, at every start.
func viewNodesCommand() *cli.Command {
	return &cli.Command{
		Name:  "nodes",
		Usage: "leave only some NUMA nodes in /sys/devices/system/node, in the calling mount namespace",
		Description: "Run inside the partition's mount namespace at every start of its kubelet\n" +
			"(kubelet-<partition>.service's ExecStartPre=): cAdvisor takes the Node's cpu\n" +
			"capacity and the Topology, CPU and Memory Managers' NUMA nodes from the node\n" +
			"directories. A tmpfs takes /sys/devices/system/node's place, read-only, with\n" +
			"each given node's directory bound back and the node lists (online, has_cpu,\n" +
			"...) cut to them; the view of a previous run is replaced. With --host-cpus the\n" +
			"first given node with a CPU lists those CPUs too: a static CPU Manager needs a\n" +
			"reserved CPU among those it sees, and its partition's nodes hold none of the\n" +
			"host's.",
		Flags: []cli.Flag{
			viewNodesFlag(),
			&cli.StringFlag{Name: "host-cpus", Usage: "host-reserved `CPUS` (\"0,40\") the first node with a CPU lists too"},
			viewRootFlag(),
		},
		Action: func(c *cli.Context) error {
			return viewNodes(c.App.Writer, c.String("root"), c.String("nodes"), c.String("host-cpus"))
		},
	}
}

// viewHugepagesCommand is kubelet-<partition>.service's ExecStartPre=,
// after `view nodes`: it shows the kubelet the partition's hugepage pools,
// at every start.
func viewHugepagesCommand() *cli.Command {
	return &cli.Command{
		Name:  "hugepages",
		Usage: "show the partition's hugepage pools over the machine's, in the calling mount namespace",
		Description: "Run inside the partition's mount namespace at every start of its kubelet\n" +
			"(kubelet-<partition>.service's ExecStartPre=, after `view nodes`): kubelet\n" +
			"cannot reserve hugepages, so it is shown the partition's own pools. Each\n" +
			"nr_hugepages file cAdvisor reads (/sys/kernel/mm/hugepages/*/ and that of each\n" +
			"NUMA node /sys/devices/system/node lists) gets the file render wrote for it\n" +
			"under " + hostpaths.Abs(hostpaths.HugepageViewRel("<partition>")) + " bound over it, read-only; the binds of a\n" +
			"previous run are taken off first. A pool the view has no file for stops the\n" +
			"kubelet, naming it. See docs/render.md, \"The hugepage view\".",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "partition", Required: true, Usage: "the partition's `NAME`, e.g. node0"},
			viewRootFlag(),
		},
		Action: func(c *cli.Context) error {
			return viewHugepages(c.App.Writer, c.String("root"), c.String("partition"))
		},
	}
}

// viewMountCommand binds the slice's usage files; `view hold` does the same
// itself, and units rendered by earlier versions run it on their own.
func viewMountCommand() *cli.Command {
	return &cli.Command{
		Name:  "mount",
		Usage: "bind the partition slice's cgroup v1 usage files over the root cgroup's, in the calling mount namespace",
		Description: "Run inside the partition's mount namespace (`view hold` does it before\n" +
			"containerd and kubelet join; units rendered by earlier versions run it through\n" +
			"nsenter as the holder's ExecStartPost=). kubelet's node usage (summary API, `kubectl top node`,\n" +
			"memory.available) is the root cgroup's; there it reads the slice's own files,\n" +
			"live. cgroup v1 only: on v2 runc's cgroup library refuses a bound file. Files\n" +
			"missing on this host (all on v2, a controller not mounted) are skipped. See\n" +
			"docs/architecture.md, \"Each kubelet's machine\".",
		Flags: []cli.Flag{
			viewSliceFlag(),
			viewRootFlag(),
		},
		Action: func(c *cli.Context) error {
			return viewMount(c.App.Writer, c.String("root"), c.String("slice"))
		},
	}
}

// viewServeCommand serves the meminfo `view hold --meminfo` mounts, in a
// directory of its own and without a holder.
func viewServeCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the live /proc/meminfo of some NUMA nodes, as " + nodeview.MeminfoFile + " in a FUSE directory, until stopped",
		Description: "The NUMA nodes' memory as the machine's, made at every read from the host's\n" +
			"/proc/meminfo and each node's meminfo (docs/architecture.md, \"Each kubelet's\n" +
			"machine\"). Root, /dev/fuse. SIGTERM or SIGINT unmounts and exits.",
		Flags: []cli.Flag{
			viewNodesFlag(),
			&cli.StringFlag{Name: "dir", Required: true, Usage: "the directory to mount the view at"},
			&cli.StringFlag{Name: "root", Value: "/", Usage: "the host's root directory, whose proc and sys are read"},
		},
		Action: func(c *cli.Context) error {
			return viewServe(c.Context, c.String("root"), c.String("nodes"), c.String("dir"))
		},
	}
}

// viewMount makes the usage binds of slice and prints what it bound; what
// it skipped (a file this host does not have) is logged at debug level.
func viewMount(w io.Writer, root, slice string) error {
	r, err := openForSlice(root, slice)
	if err != nil {
		return err
	}
	defer r.Close()
	return mountUsage(w, r, nodeview.UsageBinds(slice))
}

// openForSlice checks --slice and opens --root.
func openForSlice(root, slice string) (fsutil.Root, error) {
	if msg := sliceProblem(slice); msg != "" {
		return fsutil.Root{}, fmt.Errorf("--slice %q %s", slice, msg)
	}
	return fsutil.OpenRoot(root)
}

// mountUsage makes binds and prints what it bound.
func mountUsage(w io.Writer, r fsutil.Root, binds []nodeview.Bind) error {
	done, err := nodeview.Mount(r, binds)
	for _, m := range done {
		if m.Skipped != "" {
			slog.Debug("view: skipped", "target", r.Path(m.Target), "why", m.Skipped)
			continue
		}
		if _, werr := fmt.Fprintf(w, "bound %s over %s\n", r.Path(m.Source), r.Path(m.Target)); werr != nil {
			return werr
		}
	}
	return err
}

// holdViews are what the holder shows besides the v1 usage binds.
type holdViews struct {
	// meminfo: serve the shown nodes' /proc/meminfo (and v1 root memory
	// cgroup files); unified: bind the slice's v2 usage files.
	meminfo, unified bool
}

// viewHold makes the usage binds and, with meminfo, serves the shown
// nodes' /proc/meminfo and (cgroup v1) their root memory cgroup's usage
// files; then it tells systemd it is ready and holds until ctx ends.
func viewHold(ctx context.Context, w io.Writer, root, slice string, views holdViews) error {
	r, err := openForSlice(root, slice)
	if err != nil {
		return err
	}
	defer r.Close()
	binds := nodeview.UsageBinds(slice)
	var served map[string]nodeview.Render
	if views.meminfo {
		var done func() error
		if served, done, err = shownNodesViews(r); err != nil {
			return err
		}
		defer done()
		if _, memcg := served[path.Join(nodeview.MemcgDir, nodeview.MemcgStatFile)]; memcg {
			binds = nodeview.UsageBinds(slice, "memory")
		}
	}
	if views.unified {
		binds = append(binds, nodeview.UnifiedUsageBinds(slice)...)
	}
	if err := mountUsage(w, r, binds); err != nil {
		return err
	}
	if served != nil {
		if _, err := nodeview.ServeOver(r, served); err != nil {
			return err
		}
		for _, target := range slices.Sorted(maps.Keys(served)) {
			if _, err := fmt.Fprintf(w, "serving the shown NUMA nodes' view over %s\n", r.Path(target)); err != nil {
				return err
			}
		}
	}
	// Without NOTIFY_SOCKET (run by hand) this does nothing.
	if _, err := daemon.SdNotify(false, daemon.SdNotifyReady); err != nil {
		return fmt.Errorf("telling systemd the namespace is ready: %w", err)
	}
	<-ctx.Done()
	return nil
}

// shownNodesViews are the files the holder serves of the shown nodes, by
// target: /proc/meminfo, and the v1 root memory cgroup's usage files
// where the host has them. Each is made once here, so that a view that
// cannot be made fails the command, not a reader; done closes the source.
func shownNodesViews(r fsutil.Root) (served map[string]nodeview.Render, done func() error, err error) {
	src, err := nodeview.OpenMeminfoSource(r)
	if err != nil {
		return nil, nil, err
	}
	served = map[string]nodeview.Render{nodeview.MeminfoTarget: src.Shown()}
	switch err := src.OpenMemcg(); {
	case err == nil:
		for name, render := range src.ShownMemcg() {
			target := path.Join(nodeview.MemcgDir, name)
			// memory.memsw.* only with swap accounting.
			if _, err := r.Lstat(target); err == nil {
				served[target] = render
			}
		}
	case !errors.Is(err, fs.ErrNotExist):
		src.Close()
		return nil, nil, err
	}
	for target, render := range served {
		if _, err := render(); err != nil {
			src.Close()
			return nil, nil, fmt.Errorf("the view of the shown nodes at %s: %w", r.Path(target), err)
		}
	}
	return served, src.Close, nil
}

// nodesMeminfoView is the meminfo view of nodes, made once here so that a
// view that cannot be made fails the command, not a reader; done closes
// the source.
func nodesMeminfoView(r fsutil.Root, nodes bitmask.NodeSet) (render nodeview.Render, done func() error, err error) {
	src, err := nodeview.OpenMeminfoSource(r)
	if err != nil {
		return nil, nil, err
	}
	render = src.Nodes(nodes.IDs())
	if _, err := render(); err != nil {
		src.Close()
		return nil, nil, fmt.Errorf("the meminfo view of nodes %s: %w", nodes, err)
	}
	return render, src.Close, nil
}

// viewNodes leaves nodes alone in the calling namespace's node directory.
func viewNodes(w io.Writer, root, nodes, hostCPUs string) error {
	cpus, err := bitmask.ParseCPUList(hostCPUs)
	if err != nil {
		return fmt.Errorf("--host-cpus %q: want a CPU list such as 0 or 0,40: %v", hostCPUs, err)
	}
	r, set, err := openWithNodes(root, nodes)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := nodeview.ShowNodes(r, set, cpus); err != nil {
		return err
	}
	with := ""
	if !cpus.IsEmpty() {
		with = fmt.Sprintf(", with the host's CPUs %s", cpus)
	}
	_, err = fmt.Fprintf(w, "showing NUMA nodes %s at %s%s\n", set, r.Path(nodeview.NodesDir), with)
	return err
}

// viewHugepages binds partition's hugepage view over the pools the
// calling namespace shows.
func viewHugepages(w io.Writer, root, partition string) error {
	if msg := validation.NameProblem(partition); msg != "" {
		return fmt.Errorf("--partition %q %s", partition, msg)
	}
	r, err := fsutil.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	view := hostpaths.HugepageViewRel(partition)
	n, err := nodeview.ShowPools(r, view)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "showing %d hugepage pools of %s\n", n, r.Path(view))
	return err
}

// openWithNodes reads --nodes and opens --root.
func openWithNodes(root, nodes string) (fsutil.Root, bitmask.NodeSet, error) {
	set, err := bitmask.ParseNodeList(nodes)
	if err != nil || set.IsEmpty() {
		return fsutil.Root{}, set, fmt.Errorf("--nodes %q: want a NUMA node list such as 0 or 0-1: %v", nodes, err)
	}
	r, err := fsutil.OpenRoot(root)
	return r, set, err
}

// viewServe serves the meminfo view of nodes at dir until ctx ends.
func viewServe(ctx context.Context, root, nodes, dir string) error {
	r, set, err := openWithNodes(root, nodes)
	if err != nil {
		return err
	}
	defer r.Close()
	render, done, err := nodesMeminfoView(r, set)
	if err != nil {
		return err
	}
	defer done()
	srv, err := nodeview.Serve(dir, map[string]nodeview.Render{nodeview.MeminfoFile: render})
	if err != nil {
		return err
	}
	slog.Info("view: serving", "nodes", set.String(), "file", dir+"/"+nodeview.MeminfoFile)
	<-ctx.Done()
	return srv.Unmount()
}

// sliceProblem: the slice is a partition's, <name>.slice at the top.
func sliceProblem(slice string) string {
	name, ok := strings.CutSuffix(slice, ".slice")
	if !ok || name == "" {
		return "is not a slice name (<partition>.slice)"
	}
	if msg := validation.NameProblem(name); msg != "" {
		return msg
	}
	return ""
}
