# lib.sh — shared by up.sh, down.sh and selftest.sh (sourced, not run).
# shellcheck shell=bash

# The control-plane processes, in start order (down.sh stops them in reverse).
CLUSTER_COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler)

log() { echo "cluster: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

now_ms() { date +%s%3N; }

# pid_of STATEDIR NAME: the pid recorded for NAME, if that process is alive
# and is really ours (its command line names STATEDIR, so a recycled pid is
# never touched). Prints nothing and fails otherwise.
pid_of() {
  local state=$1 name=$2 pid
  [ -r "$state/pids/$name.pid" ] || return 1
  pid=$(cat "$state/pids/$name.pid")
  case $pid in '' | *[!0-9]*) return 1 ;; esac
  [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "$state/" || return 1
  # A zombie is as good as gone.
  [ "$(awk '/^State:/ {print $2}' "/proc/$pid/status" 2>/dev/null)" != Z ] || return 1
  echo "$pid"
}

# rss_kib PID: resident set size in KiB.
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }

# gone_within STATEDIR NAME TENTHS: wait up to TENTHS tenths of a second
# for the component to exit; false if it still runs.
gone_within() {
  local n
  for ((n = 0; n < $3; n++)); do
    pid_of "$1" "$2" >/dev/null || return 0
    sleep 0.1
  done
  ! pid_of "$1" "$2" >/dev/null
}

# stop_all STATEDIR: SIGTERM every recorded component (reverse order), wait up
# to 15 s each, then SIGKILL. Logs stay.
stop_all() {
  local state=$1 i name pid
  for ((i = ${#CLUSTER_COMPONENTS[@]} - 1; i >= 0; i--)); do
    name=${CLUSTER_COMPONENTS[i]}
    pid=$(pid_of "$state" "$name") || { rm -f "$state/pids/$name.pid"; continue; }
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    if ! gone_within "$state" "$name" 150; then
      log "$name (pid $pid) ignored SIGTERM for 15 s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      gone_within "$state" "$name" 50 || true
    fi
    if pid_of "$state" "$name" >/dev/null; then
      log "ERROR: $name (pid $pid) survived SIGKILL"
      return 1
    fi
    rm -f "$state/pids/$name.pid"
  done
}
