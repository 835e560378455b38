#!/bin/sh
# Removal leaves the partitions as they are (numa-partition remove undoes
# them, before the package goes) and masks the boot unit, as debhelper's
# dh_installsystemd does, so that its enable links left behind start
# nothing. Purge forgets the unit's enablement too. The operator's config
# and apply's records under /var/lib/numa-partition are never deleted:
# the package did not create them, and remove needs them.
set -e
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
exit 0
