package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/slices/apply"
	"github.com/numa-partition/numa-partition/slices/apply/nodes"
	"github.com/numa-partition/numa-partition/slices/preflight"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// hostFlags are the flags of every command that changes or reads the
// applied host.
func hostFlags() []cli.Flag {
	return []cli.Flag{
		rootFlag(),
		&cli.StringFlag{Name: "bus", Usage: "D-Bus address of the host's systemd (default: the local systemd; with --root, ROOT/run/dbus/system_bus_socket)"},
		&cli.BoolFlag{Name: "offline", Usage: "read --root as a tree no systemd runs on (an image, a chroot, a copy of a host): unit states unknown, nothing probed; status and --dry-run only (the default with a --root that has no run/dbus/system_bus_socket)"},
	}
}

// rootFlag is --root: every file a command writes or reads on the host
// is below it, reached through fsutil.Root.
func rootFlag() cli.Flag {
	return &cli.StringFlag{Name: "root", Value: "/", Usage: "the host's root directory: files are written and read below it (a container's or test sandbox's root works)"}
}

// hostRoot returns --root and the sysfs below it: --sysfs when given,
// else ROOT/sys.
func hostRoot(c *cli.Context) (root, sysfs string) {
	root = c.String("root")
	sysfs = globalString(c, "sysfs")
	if !globalIsSet(c, "sysfs") && filepath.Clean(root) != "/" {
		sysfs = filepath.Join(root, "sys")
	}
	return root, sysfs
}

// busSocket is where the system bus of a root is.
const busSocket = "run/dbus/system_bus_socket"

// offline says whether the command reads --root without systemd: asked
// for with --offline, or a --root (not "/", no --bus) with no system bus
// socket. readOnly commands may; the others are refused then, before
// anything is read, naming what works.
func offline(c *cli.Context, readOnly bool) (bool, error) {
	root := c.String("root")
	auto := !c.IsSet("offline") && !c.IsSet("bus") && filepath.Clean(root) != "/"
	if auto {
		_, err := fsutil.NewRoot(root).Lstat(busSocket)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return false, nil // a bus to reach, or an error connecting will name
		}
	}
	if !auto && !c.Bool("offline") {
		return false, nil
	}
	if c.IsSet("bus") {
		return false, fmt.Errorf("--offline and --bus: an offline root has no systemd to reach")
	}
	if !readOnly {
		why := "--offline"
		if auto {
			why = fmt.Sprintf("--root %s has no %s (no systemd runs there)", root, busSocket)
		}
		return false, fmt.Errorf("%s: %s changes the host through a running systemd; offline, status, diff and --dry-run work", why, c.Command.Name)
	}
	return true, nil
}

// connectSystemd connects to --bus, or to the systemd of --root.
func connectSystemd(c *cli.Context) (*systemd.Conn, error) {
	bus := c.String("bus")
	if root := c.String("root"); bus == "" && filepath.Clean(root) != "/" {
		addr, done, err := rootBus(root)
		if err != nil {
			return nil, err
		}
		defer done() // once connected, the socket's directory is not needed
		bus = addr
	}
	return systemd.Connect(bus)
}

// rootBus is the address of ROOT/run/dbus/system_bus_socket reached
// inside root: a link there (to this host's own bus, say) would have
// apply drive another systemd than root's. Call done after connecting.
func rootBus(root string) (addr string, done func(), err error) {
	sock, done, err := fsutil.NewRoot(root).SocketPath(busSocket)
	if err != nil {
		return "", nil, fmt.Errorf("the system bus of --root %s: %w", root, err)
	}
	return "unix:path=" + sock, done, nil
}

// host is what apply, status and remove work on.
type host struct {
	format      string // --output
	systemd     systemd.Manager
	conn        *systemd.Conn // the live systemd's; nil offline
	offline     bool
	root, sysfs string
}

// onHost validates --output, connects to the host's systemd (or reads
// --root offline, when readOnly allows it: offline) and runs fn.
func onHost(c *cli.Context, readOnly bool, fn func(h host) error) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	root, sysfs := hostRoot(c)
	off, err := offline(c, readOnly)
	if err != nil {
		return err
	}
	if off {
		return fn(host{format: format, systemd: systemd.NewOffline(root), offline: true, root: root, sysfs: sysfs})
	}
	m, err := connectSystemd(c)
	if err != nil {
		return err
	}
	defer m.Close()
	return fn(host{format: format, systemd: m, conn: m, root: root, sysfs: sysfs})
}

func applyCommand() *cli.Command {
	return &cli.Command{
		Name:  "apply",
		Usage: "partition the host: install the rendered units and start them, transactionally",
		Description: "Discovers the machine, plans with --config, renders, and brings the host to\n" +
			"the result through systemd's D-Bus API: writes the changed files atomically,\n" +
			"daemon-reload, starts the slices and sets their CPUs live, allocates the\n" +
			"hugepages, enables and (re)starts the changed services in dependency order\n" +
			"(hugepages, containerd, allocator, kubelet), waiting for each job, and records\n" +
			"the applied generation in /var/lib/numa-partition/applied.json.\n\n" +
			"A second apply with the same inputs changes nothing. Any failure restores the\n" +
			"previous files and unit states and exits non-zero naming the failed step.\n" +
			"--dry-run prints the diff and the unit actions and touches nothing.\n" +
			"A kubelet whose CPU or Memory Manager settings change (policies, reserved CPUs\n" +
			"or memory, hugepages) is stopped, its manager state moved aside and started,\n" +
			"since kubelet refuses state written under other settings; while that state\n" +
			"holds pods' assignments apply refuses: --drain drains the Node first (and\n" +
			"uncordons it once Ready again), or --reset-kubelet-state restarts it anyway.\n" +
			"A partition the plan no longer has takes its Node's pods with it: apply\n" +
			"refuses while pods are bound to it, unless --force; --drain drains it first\n" +
			"and, with --kubeconfig, the Node is deleted. Only those Nodes are touched;\n" +
			"the flags mean what remove's do.\n" +
			"docs/apply.md has the details, including what holds on cgroup v1 hosts.",
		Flags: append(append(append(hostFlags(), renderFlags()...),
			&cli.BoolFlag{Name: "dry-run", Usage: "print the unified diff and the unit actions; change nothing"},
			&cli.DurationFlag{Name: "job-timeout", Value: systemd.DefaultJobTimeout, Usage: "how long one unit start/stop may take before apply rolls back"},
			&cli.StringSliceFlag{Name: "ignore-preflight-errors", Usage: "make the errors of these preflight checks warnings, as kubeadm's flag (`CHECK[,CHECK…]` or all): " + strings.Join(preflightIgnorable(), ", ")},
			&cli.BoolFlag{Name: "reset-kubelet-state", Usage: "restart a kubelet whose CPU/Memory Manager settings change on fresh state even while pods hold exclusive CPUs or pinned memory in it (kubelet then forgets them); without it (or --drain) apply refuses"},
		), nodeFlags("apply")...),
		Action: func(c *cli.Context) error {
			if _, err := outputFormat(c); err != nil {
				return err
			}
			nodes, err := nodeOptions(c)
			if err != nil {
				return err
			}
			plan, b, err := loadBundle(c)
			if err != nil {
				return err
			}
			mode, err := cgroupModeFlag(c)
			if err != nil {
				return err
			}
			ignore, err := preflight.ParseIgnore(c.StringSlice("ignore-preflight-errors"))
			if err != nil {
				return err
			}
			return onHost(c, c.Bool("dry-run"), func(h host) error {
				if h.conn != nil {
					h.conn.JobTimeout = c.Duration("job-timeout")
				}
				rep, err := apply.Apply(c.Context, apply.Options{
					Root: h.root, Sysfs: h.sysfs, Systemd: h.systemd, DryRun: c.Bool("dry-run"), Version: version,
					Offline: h.offline, CgroupMode: mode,
					ResetKubeletState: c.Bool("reset-kubelet-state"), Nodes: nodes,
					WaveBundle: waveBundle(c, plan), IgnorePreflightErrors: ignore,
				}, b)
				if err != nil {
					return fmt.Errorf("apply: %w", err)
				}
				if structured(h.format) {
					err = writeData(c.App.Writer, h.format, kindApplyReport, rep)
				} else {
					err = writeApplyReport(c.App.Writer, rep)
				}
				warnAll(c.App.ErrWriter, rep.Warnings...)
				return err
			})
		},
	}
}

// preflightIgnorable are the checks --ignore-preflight-errors takes.
func preflightIgnorable() []string {
	var out []string
	for _, n := range preflight.Names {
		if preflight.Ignorable(n) {
			out = append(out, n)
		}
	}
	return out
}

// preflightLine sums the preflight up in apply's table output, naming
// the checks that did not pass (their messages are warnings, on standard
// error).
func preflightLine(rep *preflight.Report) string {
	var errs, warns []string
	for _, r := range rep.Results {
		name := r.Check
		if r.Partition != "" {
			name += " " + r.Partition
		}
		switch r.Status {
		case preflight.StatusError:
			errs = append(errs, name)
		case preflight.StatusWarning:
			warns = append(warns, name)
		}
	}
	s := fmt.Sprintf("preflight: %d checks", len(rep.Results))
	if len(errs) == 0 && len(warns) == 0 {
		return s + ", all passed"
	}
	if len(errs) > 0 {
		s += fmt.Sprintf(", %d failed (%s)", len(errs), strings.Join(errs, ", "))
	}
	if len(warns) > 0 {
		s += fmt.Sprintf(", %d with warnings (%s)", len(warns), strings.Join(warns, ", "))
	}
	return s
}

// writeApplyReport is apply's table output; its warnings go to standard
// error (warnAll).
func writeApplyReport(w io.Writer, r *apply.Report) error {
	var b strings.Builder
	if r.DryRun && r.Diff != "" {
		b.WriteString(r.Diff)
		b.WriteString("\n")
	}
	switch {
	case !r.Changed:
		fmt.Fprintf(&b, "no changes (generation %d is applied)\n", r.Generation)
	case r.DryRun:
		fmt.Fprintf(&b, "would run %d steps:\n", len(r.Steps))
	default:
		fmt.Fprintf(&b, "applied generation %d in %s, %d steps:\n", r.Generation, seconds(r.Seconds), len(r.Steps))
	}
	for i, s := range r.Steps {
		fmt.Fprintf(&b, "%4d. %s\n", i+1, s)
	}
	if r.Preflight != nil {
		b.WriteString(preflightLine(r.Preflight) + "\n")
	}
	if len(r.Waves) > 1 {
		var waves []string
		for _, w := range r.Waves {
			waves = append(waves, strings.Join(w, "+"))
		}
		verb := "rolled out"
		if r.DryRun {
			verb = "rolls out"
		}
		fmt.Fprintf(&b, "%s in %d waves, each drained, changed, Ready and uncordoned before the next: %s\n", verb, len(r.Waves), strings.Join(waves, ", then "))
	}
	if len(r.Nodes) > 0 {
		verb := "the Nodes it disrupts"
		if r.DryRun {
			verb = "the Nodes it would disrupt"
		}
		fmt.Fprintf(&b, "%s:\n", verb)
		for _, n := range r.Nodes {
			fmt.Fprintf(&b, "  %s\n", nodeChangeLine(n))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

// nodeChangeLine is one Node apply disrupts, in its table output: why,
// what apply does with it (nodes.Removal.Actions) and, unless a dry
// run, how that went.
func nodeChangeLine(n nodes.Removal) string {
	why := map[string]string{
		nodes.ReasonFreshState:       "its kubelet restarts on fresh manager state",
		nodes.ReasonPartitionGone:    "the partition goes",
		nodes.ReasonNamespaceRebuilt: "its mount namespace is rebuilt: every pod is re-created",
	}[n.Reason]
	s := fmt.Sprintf("partition %s (%s)", n.Partition, why)
	if n.Node != "" {
		s += ", Node " + n.Node
	}
	s += ":"
	var done []string
	if d := n.Drain; d != nil {
		if d.Registered {
			done = append(done, fmt.Sprintf("drained in %s (%d evicted)", seconds(d.Seconds), d.Evicted))
		} else {
			done = append(done, "not registered, nothing drained")
		}
	}
	if n.Uncordoned {
		done = append(done, "uncordoned")
	}
	if n.Deleted {
		done = append(done, "deleted")
	}
	if n.Note != "" {
		done = append(done, n.Note)
	}
	switch {
	case len(n.Actions) > 0 && len(done) > 0:
		s += " " + strings.Join(n.Actions, "; ") + " — " + strings.Join(done, ", ")
	case len(n.Actions) > 0:
		s += " " + strings.Join(n.Actions, "; ")
	case len(done) > 0:
		s += " " + strings.Join(done, ", ")
	}
	return s
}
