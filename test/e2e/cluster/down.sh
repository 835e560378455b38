#!/usr/bin/env bash
# down.sh STATEDIR — stop the control plane up.sh started in STATEDIR:
# SIGTERM each component (scheduler, controller-manager, apiserver, etcd),
# wait up to 15 s, then SIGKILL. Only pids recorded in STATEDIR/pids whose
# command line names STATEDIR are touched. Logs (STATEDIR/logs) are kept.
# Exits non-zero if a process survives. Safe to run twice.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

[ $# -eq 1 ] || die "usage: $0 STATEDIR"
[ -d "$1" ] || { log "$1: no such directory, nothing to stop"; exit 0; }
state=$(cd "$1" && pwd)
stop_all "$state"
log "stopped; logs kept in $state/logs"
