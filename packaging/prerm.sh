#!/bin/sh
# Refuse to remove the package while partitions are applied. Their units
# run /usr/bin/numa-partition (the hugepage oneshot, kubelet-state repair
# before every kubelet start, the allocators, view hold, the network
# oneshots' ExecStop=), so without it they fail, at the latest at the next
# boot, and `numa-partition remove`, which undoes them, goes with it.
#
# Applied means apply's record exists, /var/lib/numa-partition/applied.json
# (slices/apply.RecordPath; `numa-partition remove` deletes it last, and a
# killed apply leaves it marked pending): anything at that path counts, a
# link too (never followed), and it is not read. No systemctl, no D-Bus,
# no numa-partition: this works the same in a chroot or an image without
# systemd as PID 1 (DPKG_ROOT honoured).
#
# Only `remove` is checked (dpkg runs `prerm remove` for a purge of an
# installed package too); `upgrade`, `deconfigure` and `failed-upgrade`
# keep the binary in place and pass. When this fails, dpkg runs
# `postinst abort-remove` and the package stays installed as it was.
#
# NUMA_PARTITION_FORCE_REMOVE=1 in the environment of apt or dpkg removes
# the package anyway and leaves the partitions as they are: the operator's
# call (reinstall the package to run `numa-partition remove` later).
set -e
record=${DPKG_ROOT:-}/var/lib/numa-partition/applied.json
case "$1" in
  remove)
    if [ -e "$record" ] || [ -L "$record" ]; then
      case "${NUMA_PARTITION_FORCE_REMOVE:-}" in
        1|yes|true)
          cat >&2 <<EOF || true
numa-partition: warning: partitions are applied on this host ($record
exists); removing the package anyway (NUMA_PARTITION_FORCE_REMOVE is set).
Their units still call /usr/bin/numa-partition and will fail, at the latest
at the next boot. Reinstall the package and run "numa-partition remove" to
undo them.
EOF
          ;;
        *)
          cat >&2 <<EOF
numa-partition: refusing to remove the package: partitions are applied on
this host ($record exists).
Their units (hugepages, kubelet-state repair, the allocators, view hold,
the network oneshots) run /usr/bin/numa-partition and would fail at the
next boot, and "numa-partition remove" goes with the package. Undo them
first, then remove the package again:
    numa-partition remove --dry-run       # what it will do, and the pods it finds
    numa-partition remove --drain         # or --kubeconfig FILE --drain, or --force
To remove the package anyway and leave the partitions as they are (their
units will fail until the package is back), set NUMA_PARTITION_FORCE_REMOVE=1:
    NUMA_PARTITION_FORCE_REMOVE=1 apt-get remove numa-partition
EOF
          exit 1
          ;;
      esac
    fi
    ;;
  upgrade|deconfigure|failed-upgrade)
    ;;
esac
exit 0
