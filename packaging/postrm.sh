#!/bin/sh
# Removal takes the package's files and masks the boot unit, as
# debhelper's dh_installsystemd does, so that its enable links left behind
# start nothing. prerm refuses it while partitions are applied, unless
# NUMA_PARTITION_FORCE_REMOVE is set: numa-partition remove undoes them
# before the package goes.
#
# Purge forgets the unit's enablement (deb-systemd-helper purge: its
# links and state) and unmasks it, nothing else. The operator's config
# (/etc/numa-partition), apply's record and state (/var/lib/numa-partition)
# and every file apply rendered (units under /etc/systemd/system, kubelet
# and containerd configs) are never deleted: the package did not create
# them, and numa-partition remove needs them to undo the partitions.
set -e
record=${DPKG_ROOT:-}/var/lib/numa-partition/applied.json
if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
  systemctl --system daemon-reload >/dev/null || true
fi
if command -v deb-systemd-helper >/dev/null; then
  case "$1" in
    remove)
      deb-systemd-helper mask numa-partition.service >/dev/null || true
      ;;
    purge)
      deb-systemd-helper purge numa-partition.service >/dev/null || true
      deb-systemd-helper unmask numa-partition.service >/dev/null || true
      ;;
  esac
fi
if [ "$1" = purge ] && { [ -e "$record" ] || [ -L "$record" ]; }; then
  cat >&2 <<NOTE || true
numa-partition: partitions are still applied ($record exists); purge
kept them, the config and /var/lib/numa-partition. Reinstall the package
and run "numa-partition remove" to undo them.
NOTE
fi
exit 0
