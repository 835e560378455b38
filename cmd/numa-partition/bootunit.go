package main

import (
	"fmt"
	"io"
	"path"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/slices/apply"
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
// /etc; and a host without the config does not fail at boot.
func bootUnit() string {
	record := path.Join("/", apply.RecordPath)
	return fmt.Sprintf(`# Installed by the numa-partition package (generated: numa-partition boot-unit).
# Re-applies the partition plan at every boot so that slices, kubelets and
# hugepages match %[1]s before workloads start, on a host
# where numa-partition apply has run: %[2]s is
# the record apply writes and numa-partition remove deletes. Until the
# operator has applied once, this unit is skipped and the package changes
# nothing.
[Unit]
Description=Apply the NUMA partition plan (slices, kubelets, hugepages)
Documentation=man:numa-partition(8)
Wants=dbus.service
After=dbus.service systemd-sysctl.service
Before=kubelet.service containerd.service
ConditionPathExists=%[2]s
ConditionPathExists=%[1]s

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=%[3]s --config %[1]s apply
TimeoutStartSec=10min

[Install]
WantedBy=multi-user.target
`, defaultConfigPath, record, render.DefaultBinary)
}
