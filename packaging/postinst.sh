#!/bin/sh
# Enable the boot-time apply; do not apply now: the operator reviews the
# config first (numa-partition plan, apply --dry-run).
set -e
if [ "$1" = "configure" ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload >/dev/null 2>&1 || true
  systemctl enable numa-partition.service >/dev/null 2>&1 || true
fi
exit 0
