package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
)

// liveSysfs is the running machine's sysfs.
const liveSysfs = "/sys"

// warnedDumpFacts is the app's Metadata key that says the warning of
// warnDumpFacts was given: once per run, however often the run plans.
const warnedDumpFacts = "dumpFactsWarned"

// warnDumpFacts warns, once per run, when a plan of another machine's
// sysfs (--sysfs a dump, not the live /sys) took this machine's host
// facts, --host-facts not given (#40: `--sysfs <dump> plan` showed this
// host's name, pid limit and disk, and nothing said so). hostname is
// this machine's name when the plan took it (neither --hostname nor
// kubelet.hostname named one), else "".
func warnDumpFacts(c *cli.Context, hostname string) {
	sysfs := globalString(c, "sysfs")
	if c.String("host-facts") != "" || c.App.Metadata[warnedDumpFacts] == true || isLiveSysfs(sysfs) {
		return
	}
	noDumpFactsWarning(c)
	slog.Warn(dumpFactsMessage(hostname, cgroupFromThisMachine(c)), "sysfs", sysfs)
}

// noDumpFactsWarning keeps warnDumpFacts quiet for the rest of the run.
func noDumpFactsWarning(c *cli.Context) {
	if c.App.Metadata == nil {
		c.App.Metadata = map[string]any{}
	}
	c.App.Metadata[warnedDumpFacts] = true
}

// dumpFactsMessage names the facts a plan of a dump took from this
// machine (hostname is its name when the plan took it, else "") and how
// to give the dump's.
func dumpFactsMessage(hostname string, cgroup bool) string {
	var facts []string
	if hostname != "" {
		facts = append(facts, "host name ("+hostname+")")
	}
	facts = append(facts, "pid limit", "filesystems (/ and the kubelet root dirs)", "network interfaces")
	if cgroup {
		facts = append(facts, "cgroup mode")
	}
	list := strings.Join(facts[:len(facts)-1], ", ") + " and " + facts[len(facts)-1]
	return "planning another machine's sysfs with this machine's host facts: the plan's " + list +
		" are this machine's, not the dumped machine's; run `numa-partition discover --host-facts-out FILE`" +
		" on that machine and plan with --host-facts FILE"
}

// cgroupFromThisMachine says whether the plan's cgroup mode is read
// from this machine: no --cgroup-mode, and no --root other than /.
func cgroupFromThisMachine(c *cli.Context) bool {
	if c.String("cgroup-mode") != "" {
		return false
	}
	root := c.String("root")
	return root == "" || filepath.Clean(root) == "/"
}

// isLiveSysfs says whether dir is the running machine's /sys (itself, or
// a path to it); a dir that cannot be read is not a dump to warn of
// (discovery says what is wrong with it).
func isLiveSysfs(dir string) bool {
	if filepath.Clean(dir) == liveSysfs {
		return true
	}
	st, err := os.Stat(dir)
	if err != nil {
		return true
	}
	live, err := os.Stat(liveSysfs)
	return err == nil && os.SameFile(st, live)
}
