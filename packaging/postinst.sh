#!/bin/sh
# Enable the boot-time re-apply, as debhelper's dh_installsystemd does (it
# keeps an operator's disable across upgrades). Enabling changes nothing
# on the host by itself: numa-partition.service runs only where
# numa-partition apply has run once (its ConditionPathExists= on the
# applied record). Nothing is applied now: the operator reviews a config
# first (numa-partition plan, apply --dry-run).
#
# An upgrade (configure with the previous version) starts, stops and
# restarts nothing, unlike dh_installsystemd's default: not the boot unit
# (restarting it would re-apply what nobody reviewed) and none of the
# partitions' units, which keep running; their processes (allocators, view
# hold) keep the old binary until they restart. daemon-reload only reads
# the unit files again. Where partitions are applied, a note says how to
# see what re-applying with this version would change.
set -e
record=${DPKG_ROOT:-}/var/lib/numa-partition/applied.json
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
if [ "$1" = configure ] && [ -n "${2:-}" ] && { [ -e "$record" ] || [ -L "$record" ]; }; then
  cat >&2 <<NOTE || true
numa-partition: installed over version $2 with partitions applied ($record):
nothing was restarted. "numa-partition apply --dry-run" shows what
re-applying with this version would change (the steps and a diff of the
files; "no changes" when it renders the same), and "numa-partition apply"
applies it. numa-partition.service re-applies at the next boot: review first.
NOTE
fi
if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
  systemctl --system daemon-reload >/dev/null || true
fi
exit 0
