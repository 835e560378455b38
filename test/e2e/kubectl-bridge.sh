#!/usr/bin/env bash
# kubectl-bridge.sh DIR KUBECTL KUBECONFIG — runs a boot's kubectl calls
# on the host, natively, for its guest (run.sh starts one per boot, in the
# lab's network namespace, and stops it when the VM ends).
#
# Why: under TCG one kubectl process costs 1-7 s of the VM's one emulated
# core before it sends a request (0.16 s natively: the Go runtime and
# every API group's registration), a `kubectl exec` 6-35 s; in CI of
# 2026-12-07 boot v2's 58 calls took 377 s and v1's 61 took 224 s, and the
# CPU they took was the kubelets' and containerds' the steps waited for.
# Run here, a call is the same request to the same API server (and an
# exec or logs the same path through it to the partition's kubelet), as
# an operator's kubectl on another machine sends it.
#
# The protocol, over the boot's 9p share (guest/lib.sh, kubectl_call, is
# the other side): the guest makes DIR/ID.tmp/ with `args` (NUL-separated;
# a file it names after -f is copied in as file-N and named @REQ@/file-N)
# and, for `-f -`, `stdin`, then renames it DIR/ID.req. This loop renames
# it ID.run (taken), runs kubectl with those arguments (@REQ@ replaced by
# the request's folder) and writes out, err and, last, rc, which the guest
# waits for; the guest removes the folder. Each call runs in a process of
# its own, so that a long exec does not hold the others.
set -uo pipefail
dir=${1:?usage: kubectl-bridge.sh DIR KUBECTL KUBECONFIG}
kubectl=${2:?kubectl binary}
kubeconfig=${3:?kubeconfig}
mkdir -p "$dir"

# serve REQ: one call; its rc appears only once out and err are complete.
serve() {
  local r=$1 a args=() in=/dev/null rc=0
  while IFS= read -r -d '' a; do args+=("${a//@REQ@/$r}"); done < "$r/args"
  [ -e "$r/stdin" ] && in=$r/stdin
  # A call past 10 minutes is stuck: the guest's own wait ends before.
  timeout --kill-after=5 600 "$kubectl" --kubeconfig "$kubeconfig" "${args[@]}" < "$in" > "$r/out" 2> "$r/err" || rc=$?
  echo "$rc" > "$r/rc.tmp" && mv "$r/rc.tmp" "$r/rc"
}

# The VM ends by run.sh killing this loop; calls in flight end with it.
trap 'kill $(jobs -p) 2>/dev/null; exit 0' TERM INT
shopt -s nullglob
parent=$PPID
# The loop's pause is a read that times out on a FIFO nobody writes to:
# `sleep` would be a process ten times a second, each boot's 2-3 % of a
# core taken from the VMs (CI of 2026-12-07).
tick=$(mktemp -u) && mkfifo -m 600 "$tick" && exec {tick_fd}<>"$tick" && rm -f "$tick" || exit 1
while kill -0 "$parent" 2>/dev/null; do  # not past the run that started it
  for req in "$dir"/*.req; do
    run=${req%.req}.run
    mv "$req" "$run" 2>/dev/null || continue
    serve "$run" &
  done
  read -r -t 0.1 -u "$tick_fd"
done
