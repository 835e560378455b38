#!/bin/sh
# Enable the boot-time re-apply, as debhelper's dh_installsystemd does (it
# keeps an operator's disable across upgrades). Enabling changes nothing
# on the host by itself: numa-partition.service runs only where
# numa-partition apply has run once (its ConditionPathExists= on the
# applied record). Nothing is applied now: the operator reviews a config
# first (numa-partition plan, apply --dry-run).
set -e
case "$1" in
  configure|abort-upgrade|abort-deconfigure|abort-remove)
    # removes only the mask postrm set when the package was removed
    deb-systemd-helper unmask numa-partition.service >/dev/null || true
    if deb-systemd-helper --quiet was-enabled numa-partition.service; then
      deb-systemd-helper enable numa-partition.service >/dev/null || true
    else
      deb-systemd-helper update-state numa-partition.service >/dev/null || true
    fi
    ;;
esac
if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
  systemctl --system daemon-reload >/dev/null || true
fi
exit 0
