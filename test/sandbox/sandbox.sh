#!/bin/bash
# sandbox.sh — a throw-away systemd for integration tests: the host's own
# systemd runs as PID 1 in fresh pid/mount/uts/ipc/net/cgroup namespaces, on
# an overlay of / whose upper layer is a tmpfs. Nothing it does reaches the
# host's files; its cgroups live under "npsandbox-NAME" in every hierarchy.
#
#   sandbox.sh launch NAME STATEDIR   run the sandbox in the foreground (the
#                                     caller backgrounds it; PID 1 dies with it)
#   sandbox.sh cleanup NAME           remove NAME's cgroups (after PID 1 exited)
#   sandbox.sh sweep                  remove cgroups of sandboxes whose launcher died
#                                     (NAME must start with the launcher's PID)
#   sandbox.sh exec PID1 CMD...       run CMD inside the sandbox's namespaces
#
# From the host, the sandbox's root is /proc/PID1/root and its system bus is
# unix:path=/proc/PID1/root/run/dbus/system_bus_socket (no nsenter needed).
# Needs real root (CAP_SYS_ADMIN), systemd, dbus and util-linux.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CGROOT=/sys/fs/cgroup
# Capabilities a sandboxed PID 1 must never use on the shared kernel.
DROP_CAPS=-sys_module,-sys_time,-sys_rawio,-syslog,-wake_alarm,-sys_pacct,-mac_admin,-mac_override,-block_suspend,-audit_control,-audit_read

# hierarchies prints one line per cgroup hierarchy: "DIR TYPE", DIR relative
# to /sys/fs/cgroup ("." for a pure v2 host).
hierarchies() {
  awk -v r="$CGROOT" '($3=="cgroup"||$3=="cgroup2") && index($2, r)==1 {
      d=substr($2, length(r)+2); if (d=="") d="."; print d, $3 }' /proc/self/mounts
}

cg_dirs() { # NAME -> every cgroup directory of the sandbox
  hierarchies | while read -r d _; do echo "$CGROOT/$d/npsandbox-$1"; done
}

cg_create() {
  hierarchies | while read -r d t; do
    local c=$CGROOT/$d/npsandbox-$1
    mkdir -p "$c"
    if [ "$t" = cgroup ] && [ -e "$CGROOT/$d/cpuset.cpus" ]; then
      # v1 cpuset: a new group starts empty; give it all and let children inherit
      cat "$CGROOT/$d/cpuset.cpus" > "$c/cpuset.cpus"
      cat "$CGROOT/$d/cpuset.mems" > "$c/cpuset.mems"
      echo 1 > "$c/cgroup.clone_children"
    fi
    if [ "$t" = cgroup2 ] && [ "$d" = . ]; then
      # pure v2 host: delegate every controller the root offers
      for ctl in $(cat "$CGROOT/cgroup.controllers"); do
        echo "+$ctl" > "$CGROOT/cgroup.subtree_control" 2>/dev/null || true
      done
    fi
  done
}

cg_remove() { # depth-first: systemd's groups first, ours last
  for c in $(cg_dirs "$1"); do
    [ -d "$c" ] || continue
    for i in 1 2 3 4 5 6 7 8 9 10; do
      find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
      [ -d "$c" ] || break
      sleep 0.2
    done
    if [ -d "$c" ]; then echo "sandbox: could not remove $c" >&2; fi
  done
}

case "${1:?launch|cleanup|sweep|exec}" in
launch)
  NAME=${2:?NAME}; STATE=${3:?STATEDIR}
  mkdir -p "$STATE"; : > "$STATE/console.log"
  cg_create "$NAME"
  for c in $(cg_dirs "$NAME"); do echo $$ > "$c/cgroup.procs"; done
  # This process is now inside npsandbox-NAME everywhere, so that group becomes
  # the new cgroup namespace's root. --kill-child: PID 1 dies with us.
  exec unshare --fork --kill-child --pid --mount --uts --ipc --net --cgroup --propagation private \
       setpriv --bounding-set "$DROP_CAPS" -- "$HERE/inner.sh" "$STATE"
  ;;
cleanup)
  cg_remove "${2:?NAME}"
  ;;
sweep)
  hierarchies | while read -r d _; do
    for c in "$CGROOT/$d"/npsandbox-*; do
      [ -d "$c" ] || continue
      # NAME starts with the PID of the process that launched it: while that
      # process lives, the group is its (maybe still empty) sandbox's.
      owner=${c##*/npsandbox-}; owner=${owner%%-*}
      if [ -d "/proc/$owner" ]; then continue; fi
      if [ -z "$(find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null)" ]; then
        find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
      fi
    done
  done
  ;;
exec)
  P=${2:?PID1}; shift 2
  exec nsenter -t "$P" -m -p -u -i -n -C -- "$@"
  ;;
*) echo "usage: $0 launch|cleanup|sweep|exec" >&2; exit 2 ;;
esac
