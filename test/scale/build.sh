#!/usr/bin/env bash
# build.sh [--cached] — build (once) what run.sh needs beside the e2e's real
# control plane (test/realbin/build.sh), and print the folder that holds it:
#   kwok          KWOK's controller (sigs.k8s.io/kwok/cmd/kwok): the simulated
#                 kubelets (Node status, Lease heartbeats, pod status)
#   scalemetrics  reads the components' /metrics (test/scale/cmd/scalemetrics)
#   agentwatch    holds the watches each Node's agents would (test/scale/cmd/agentwatch)
#   stages/       KWOK's own Stage manifests for Nodes and pods, as its
#                 module ships them (run.sh sets the heartbeat's period)
# Static (CGO_ENABLED=0), -trimpath, stripped. test/scale is a Go module of its
# own: KWOK and its Kubernetes client libraries never enter the product's
# go.mod. Cached in $np_cache/scale/<key>/ (test/cachedir.sh: outside the
# clone), where <key> hashes this script, test/scale/go.{mod,sum} and its Go
# sources: a version change rebuilds, anything else reuses. A cold build
# takes 5-10 min on 2 cores. With --cached it builds nothing: it prints the
# folder when everything is there and fails otherwise. Logs go to stderr;
# stdout is the folder alone.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
inputs=("$0" "$here/go.mod" "$here/go.sum")
while IFS= read -r f; do inputs+=("$f"); done < <(find "$here" -name '*.go' ! -name '*_test.go' | LC_ALL=C sort)
key=$(cat "${inputs[@]}" | sha256sum | cut -c1-16)
. "$repo/test/cachedir.sh"
out=${SCALE_CACHE:-$np_cache/scale}/$key
log() { echo "scale-build: $*" >&2; }
built() { [ -x "$out/kwok" ] && [ -x "$out/scalemetrics" ] && [ -x "$out/agentwatch" ] && [ -s "$out/stages/node-initialize.yaml" ]; }
if built; then log "cached $out"; echo "$out"; exit 0; fi
if [ "${1:-}" = --cached ]; then log "not built yet: $out"; exit 1; fi
[ $# -eq 0 ] || { echo "usage: $0 [--cached]" >&2; exit 2; }

# One build of a key at a time; a second one waits, then finds it built.
mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
flock 9
if built; then log "cached $out (built while waiting)"; echo "$out"; exit 0; fi
tmp=$out.tmp
rm -rf "$tmp"; mkdir -p "$tmp/stages"
trap 'rm -rf "$tmp"' EXIT # a failed build leaves nothing half done
t0=$SECONDS
export CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false"
# nice and -p 1: this runs beside other builds on 2 cores. (KWOK's
# pkg/consts carries its version: no -X needed.)
cd "$here"
ver=$(go list -m -f '{{.Version}}' sigs.k8s.io/kwok)
nice -n 19 go build -p 1 -ldflags "-s -w" -o "$tmp/" sigs.k8s.io/kwok/cmd/kwok ./cmd/scalemetrics ./cmd/agentwatch
log "kwok $ver, scalemetrics and agentwatch built ($((SECONDS - t0)) s)"
# The Stages kwokctl would give a cluster whose kubelets hold Leases: Node
# initialise + heartbeat-with-lease, pod ready/complete/delete.
kdir=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
cp "$kdir"/kustomize/stage/node/fast/node-initialize.yaml \
  "$kdir"/kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
  "$kdir"/kustomize/stage/pod/fast/pod-{ready,complete,delete}.yaml "$tmp/stages/"
chmod 644 "$tmp"/stages/*
# Drop other keys' builds once they are a day old (a run in progress may
# still be using them).
find "$(dirname "$out")" -mindepth 1 -maxdepth 1 ! -name "$key" ! -name "$key.tmp" ! -name "$key.lock" -mmin +1440 -exec rm -rf {} +
rm -rf "$out"; mv "$tmp" "$out"
log "built $out in $((SECONDS - t0)) s"
echo "$out"
