package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/kubeletstate"
	"github.com/numa-partition/numa-partition/numa"
)

func kubeletStateCommand() *cli.Command {
	return &cli.Command{
		Name:  "kubelet-state",
		Usage: "repair a kubelet's CPU or Memory Manager checkpoint it cannot start from (run by kubelet-<partition>.service)",
		Subcommands: []*cli.Command{{
			Name:  "repair",
			Usage: "move cpu_manager_state aside when every CPU is exclusively assigned, memory_manager_state when the machine moved",
			Description: "kubelet 1.37 with the static CPU Manager policy and strict-cpu-reservation\n" +
				"refuses to start on a checkpoint whose shared pool is empty while pods hold\n" +
				"exclusive CPUs (\"default cpuset cannot be empty\", kubernetes/kubernetes#141196):\n" +
				"a partition whose every pod CPU went to Guaranteed pods never got its kubelet\n" +
				"back after a crash or a restart. Run before kubelet starts (ExecStartPre=), this\n" +
				"moves ROOT_DIR/cpu_manager_state aside (cpu_manager_state.numa-partition-stale)\n" +
				"in exactly that state and leaves it otherwise; kubelet then admits the running\n" +
				"pods again and assigns their CPUs anew. The same for ROOT_DIR/memory_manager_state\n" +
				"when its machine state is not the machine's now (a reboot moved a NUMA node's\n" +
				"MemTotal, or its hugepage pools: \"the expected machine state is different from\n" +
				"the real one\", kubernetes/kubernetes#131253), read from --sysfs. It exits\n" +
				"non-zero only when it cannot read the machine or read or move a file.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "root-dir", Required: true, Usage: "the kubelet's root dir (kubelet --root-dir)"},
			},
			Action: func(c *cli.Context) error {
				dir := c.String("root-dir")
				if !filepath.IsAbs(dir) {
					return fmt.Errorf("--root-dir %q: an absolute path is needed", dir)
				}
				rep, err := kubeletstate.RepairSharedPool(dir)
				if err != nil {
					return fmt.Errorf("kubelet-state repair: %w", err)
				}
				if rep.Moved {
					fmt.Fprintf(c.App.ErrWriter, "numa-partition: %s had every CPU exclusively assigned (pods %s) and an empty shared pool, which kubelet refuses to start on (kubernetes/kubernetes#141196): moved it to %s; kubelet assigns the running pods' CPUs again\n",
						filepath.Join(dir, kubeletstate.CPUFile), strings.Join(rep.Pods, ", "), kubeletstate.CPUFile+kubeletstate.StaleSuffix)
				}
				machine := func() (kubeletstate.NodeSizes, error) {
					topo, err := numa.NewFS(globalString(c, "sysfs")).WithContext(c.Context).Discover()
					if err != nil {
						return nil, err
					}
					return kubeletstate.SizesOf(topo), nil
				}
				if rep, err = kubeletstate.RepairMemoryMachine(dir, machine); err != nil {
					return fmt.Errorf("kubelet-state repair: %w", err)
				}
				if rep.Moved {
					fmt.Fprintf(c.App.ErrWriter, "numa-partition: %s is not this machine now (%s; a reboot moves a NUMA node's MemTotal), which kubelet refuses to start on (kubernetes/kubernetes#131253): moved it to %s; kubelet places the memory of its Node's pods (%s) again\n",
						filepath.Join(dir, kubeletstate.MemoryFile), rep.Why, kubeletstate.MemoryFile+kubeletstate.StaleSuffix, strings.Join(rep.Pods, ", "))
				}
				return nil
			},
		}},
	}
}
