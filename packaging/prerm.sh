#!/bin/sh
# Leave partitions in place on upgrade; on removal only disable the boot
# apply: `numa-partition remove` undoes the partitioning explicitly.
set -e
if [ "$1" = "remove" ] && [ -d /run/systemd/system ]; then
  systemctl disable numa-partition.service >/dev/null 2>&1 || true
fi
exit 0
