package main

import (
	"fmt"
	"io"
	"path"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/render"
)

// bootUnitCommand prints the package's numa-partition.service
// (packaging/, make generate), so that its conditions name the files the
// code reads and writes, not copies of their paths.
func bootUnitCommand() *cli.Command {
	return &cli.Command{
		Name:   "boot-unit",
		Usage:  "print the packaged numa-partition.service, generated from the paths apply uses",
		Hidden: true,
		Action: func(c *cli.Context) error {
			_, err := io.WriteString(c.App.Writer, bootUnit())
			return err
		},
	}
}

// bootUnit re-applies at boot only on a host whose operator has applied
// once: the applied record is there (apply writes it, remove deletes it).
// Installing the package alone changes nothing, whatever config lies in
// /etc; and a host without the config does not fail at boot. It applies
// the plan apply installed (bundle.PlanPath, the one last applied, which
// an operator reviewed with apply --dry-run or --plan), never a config
// edited since: apply --plan refuses when the config and the host plan
// otherwise now, naming the first line that differs, and the partitions
// keep the units they have (#37).
func bootUnit() string {
	recordPath := path.Join("/", record.Path)
	plan := path.Join("/", bundle.PlanPath)
	return fmt.Sprintf(`# Installed by the numa-partition package (generated: numa-partition boot-unit).
# Re-applies, at every boot, the partition plan last applied (%[4]s, which
# apply installs: what was reviewed), so that slices, kubelets and hugepages
# match it before workloads start, on a host where numa-partition apply has
# run: %[2]s is the record apply writes and
# numa-partition remove deletes. A %[1]s edited since
# is not applied: the unit fails, naming the first line of the plan that
# differs (journalctl -u numa-partition), and the partitions keep the units
# they have; review the change with apply --dry-run and apply it. Until the
# operator has applied once, this unit is skipped and the package changes
# nothing.
[Unit]
Description=Apply the reviewed NUMA partition plan (slices, kubelets, hugepages)
Documentation=man:numa-partition(8)
Wants=dbus.service
After=dbus.service systemd-sysctl.service
Before=kubelet.service containerd.service
ConditionPathExists=%[2]s
ConditionPathExists=%[1]s
ConditionPathExists=%[4]s

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=%[3]s --config %[1]s apply --plan %[4]s
TimeoutStartSec=10min

[Install]
WantedBy=multi-user.target
`, defaultConfigPath, recordPath, render.DefaultBinary, plan)
}
