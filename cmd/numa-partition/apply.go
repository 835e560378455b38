package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/slices/apply"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// hostFlags are the flags of every command that changes or reads the
// applied host.
func hostFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "root", Value: "/", Usage: "the host's root directory: files are written and read below it (a container's or test sandbox's root works)"},
		&cli.StringFlag{Name: "bus", Usage: "D-Bus address of the host's systemd (default: the local systemd; with --root, ROOT/run/dbus/system_bus_socket)"},
	}
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

// connectSystemd connects to --bus, or to the systemd of --root.
func connectSystemd(c *cli.Context) (*systemd.Conn, error) {
	bus := c.String("bus")
	if root := c.String("root"); bus == "" && filepath.Clean(root) != "/" {
		bus = "unix:path=" + filepath.Join(root, "run/dbus/system_bus_socket")
	}
	return systemd.Connect(bus)
}

// host is what apply, status and remove work on.
type host struct {
	format      string // --output
	systemd     *systemd.Conn
	root, sysfs string
}

// onHost validates --output, connects to the host's systemd and runs fn.
func onHost(c *cli.Context, fn func(h host) error) error {
	format, err := outputFormat(c)
	if err != nil {
		return err
	}
	m, err := connectSystemd(c)
	if err != nil {
		return err
	}
	defer m.Close()
	root, sysfs := hostRoot(c)
	return fn(host{format: format, systemd: m, root: root, sysfs: sysfs})
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
			"holds pods' assignments apply refuses: drain the Node first, or\n" +
			"--reset-kubelet-state.\n" +
			"docs/apply.md has the details, including what holds on cgroup v1 hosts.",
		Flags: append(append(hostFlags(), renderFlags()...),
			&cli.BoolFlag{Name: "dry-run", Usage: "print the unified diff and the unit actions; change nothing"},
			&cli.DurationFlag{Name: "job-timeout", Value: systemd.DefaultJobTimeout, Usage: "how long one unit start/stop may take before apply rolls back"},
			&cli.BoolFlag{Name: "reset-kubelet-state", Usage: "restart a kubelet whose CPU/Memory Manager settings change on fresh state even while pods hold exclusive CPUs or pinned memory in it (kubelet then forgets them); without it apply refuses and says to drain"},
		),
		Action: func(c *cli.Context) error {
			if _, err := outputFormat(c); err != nil {
				return err
			}
			plan, b, err := loadBundle(c)
			if err != nil {
				return err
			}
			return onHost(c, func(h host) error {
				h.systemd.JobTimeout = c.Duration("job-timeout")
				rep, err := apply.Apply(c.Context, apply.Options{
					Root: h.root, Sysfs: h.sysfs, Systemd: h.systemd, DryRun: c.Bool("dry-run"), Version: version,
					ResetKubeletState: c.Bool("reset-kubelet-state"),
				}, plan, b)
				if err != nil {
					return fmt.Errorf("apply: %w", err)
				}
				if structured(h.format) {
					return writeData(c.App.Writer, h.format, rep)
				}
				return writeApplyReport(c.App.Writer, rep)
			})
		},
	}
}

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
	for _, warn := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", warn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}
