package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// helpExamples are the examples a command's --help (and help CMD) ends
// with, as kubectl's do: a comment line, then the command line. urfave/cli
// has no field for them, so withExamples appends them to the command's
// help template. TestHelpExamples_Issue40 checks that every flag they use
// is one the command has.
var helpExamples = map[string]string{
	"discover": `# The machine: sockets, NUMA nodes, CPUs, memory, hugepages, distances, PCI
numa-partition discover
# The same as one object for a script (docs/discover.md)
numa-partition discover -o json
# On the target host: keep its facts, to plan it elsewhere from a sysfs dump
numa-partition discover --host-facts-out facts.json
# A sysfs dump's machine
numa-partition discover --sysfs ./dump/sys`,
	"plan": `# What the config makes of this machine; nothing changes
numa-partition plan
# A plan to review, then render or apply exactly (--plan)
numa-partition plan -o json > plan.json
# The picture for the review: every CPU coloured by its partition
numa-partition plan -o svg > plan.svg
# Another machine, from its sysfs dump and the facts discover --host-facts-out kept
numa-partition plan --sysfs ./dump/sys --host-facts facts.json --config ./config.toml`,
	"render": `# The files apply would install, below ./rendered as they would lie below /
numa-partition render --out ./rendered
# A reviewed plan's files; refused if this host and config plan otherwise now
numa-partition render --plan plan.json --out ./rendered
# The whole bundle as one object
numa-partition render -o json`,
	"apply": `# What would change: the unified diff and the unit actions; nothing is touched
numa-partition apply --dry-run
# Partition the host, then check it
numa-partition apply && numa-partition status
# Apply a reviewed plan, draining first the Nodes it disrupts
numa-partition apply --plan plan.json --drain --kubeconfig /etc/kubernetes/admin.conf`,
	"status": `# Every partition's units, cpusets, memory, health and Node; exit 1 if degraded
numa-partition status
# One Status object for a script or a monitor (docs/output-reference.md)
numa-partition status -o json
# Without asking the API server about the Nodes
numa-partition status --no-api
# A host's root no systemd runs on (an image, a copy)
numa-partition status --root /mnt/host`,
	"remove": `# What remove would do, and the pods bound to each Node; nothing is done
numa-partition remove --dry-run
# Drain each partition's Node, undo apply, and delete the Nodes
numa-partition remove --drain --kubeconfig /etc/kubernetes/admin.conf`,
}

// withExamples gives the commands of helpExamples an EXAMPLES section at
// the end of their help.
func withExamples(cmds []*cli.Command) []*cli.Command {
	for _, cmd := range cmds {
		if ex, ok := helpExamples[cmd.Name]; ok {
			cmd.CustomHelpTemplate = cli.CommandHelpTemplate + "\nEXAMPLES:\n   " + strings.ReplaceAll(ex, "\n", "\n   ") + "\n"
		}
	}
	return cmds
}
