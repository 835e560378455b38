#!/bin/bash
# scenario.sh — runs INSIDE the e2e VM as numa-e2e.service, once per boot;
# its output goes to the second serial port (the host's scenario.log).
# Runs every step of this cgroup mode in order, each under a hard timeout,
# and writes one line per step to /mnt/share/results.tsv:
#   step <TAB> PASS|FAIL|SKIP <TAB> seconds <TAB> first failure message
set -u
. /e2e/env
share=/mnt/share
mkdir -p "$share/steps" /run/e2e
# Where the .deb puts it: rendered units (allocator, hugepages) call it there.
ln -sf /e2e/bin/numa-partition /usr/bin/numa-partition
ln -sf /e2e/bin/numa-partition /usr/local/bin/numa-partition
# The real kubelet and containerd where a package puts them, which is where
# the config's defaults look (containerd finds its shim on PATH).
for b in kubelet containerd containerd-shim-runc-v2 ctr kubectl; do
  ln -sf /e2e/bin/$b /usr/bin/$b
done
# The host's name is this boot's: its Nodes are e2e-v2-node0, ...
echo "e2e-$E2E_MODE" > /etc/hostname
hostname "e2e-$E2E_MODE"
# The journal as it happens, for a run that hangs or is killed.
journalctl -b -f --no-pager -o short-monotonic > "$share/journal-live.txt" 2>&1 &
results=$share/results.tsv
: > "$results"
echo "=== E2E START mode=$E2E_MODE uptime=$(cut -d' ' -f1 /proc/uptime) kernel=$(uname -r)"
echo "cmdline: $(cat /proc/cmdline)"

# The steps of each cgroup mode, in order. Later steps build on earlier ones
# (and say so when those failed).
case $E2E_MODE in
  v2) steps="topology hugepages-sysfs discover cluster apply network logs agents plugins allocatable placement nri pending hugepages admit status reapply change reserve killed remove" ;;
  v1) steps="topology discover cluster apply allocatable placement pending hugepages status reserve remove" ;;
  n4) steps="topology discover cluster apply allocatable fill unit remove" ;;
  *) echo "unknown E2E_MODE=$E2E_MODE"; steps= ;;
esac

selected() {
  [ -z "${E2E_STEPS:-}" ] && return 0
  case ",$E2E_STEPS," in *",$1,"*) return 0 ;; esac
  return 1
}

for step in $steps; do
  if ! selected "$step"; then
    printf '%s\tSKIP\t0\tnot selected by E2E_STEPS\n' "$step" >> "$results"
    continue
  fi
  echo "--- step $step (uptime $(cut -d' ' -f1 /proc/uptime))"
  t0=$(date +%s%N)
  timeout --kill-after=5 600 bash "/e2e/guest/steps/$step.sh" > "$share/steps/$step.log" 2>&1
  rc=$?
  secs=$(( ($(date +%s%N) - t0) / 1000000 ))
  secs=$(printf '%d.%03d' $((secs / 1000)) $((secs % 1000)))
  cat "$share/steps/$step.log"
  if [ $rc = 0 ]; then
    touch "/run/e2e/passed-$step"
    printf '%s\tPASS\t%s\t\n' "$step" "$secs" >> "$results"
  else
    msg=$(grep -m1 '^FAIL:' "$share/steps/$step.log" | cut -c7- | tr '\t' ' ')
    [ $rc = 124 ] && msg="timed out after 600s; ${msg}"
    printf '%s\tFAIL\t%s\t%s\n' "$step" "$secs" "${msg:-exit status $rc, no FAIL line}" >> "$results"
  fi
done

journalctl -b --no-pager -o short-monotonic > "$share/journal.txt" 2>&1
for u in kubelet-node0 kubelet-node1 containerd-node0 containerd-node1; do
  journalctl -b --no-pager -o short-monotonic -u $u.service > "$share/$u.log" 2>&1
done
systemctl list-units --failed --no-pager > "$share/failed-units.txt" 2>&1
sync
echo "=== E2E END mode=$E2E_MODE pass=$(grep -c $'\tPASS\t' "$results") fail=$(grep -c $'\tFAIL\t' "$results") uptime=$(cut -d' ' -f1 /proc/uptime)"
