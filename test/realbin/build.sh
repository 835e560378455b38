#!/usr/bin/env bash
# build.sh — build (once) the real binaries the e2e runs, from the Go module
# proxy, static (CGO_ENABLED=0), stripped, and print the folder that holds
# them. Three modules of their own keep them out of the product's go.mod:
#   test/k8s        kubelet kube-apiserver kube-scheduler kube-controller-manager kubectl (v1.37.2),
#                   and kubelet-canary: kubelet again, stamped v1.37.2+canary (the
#                   e2e's kubelet upgrade, step canary: another build that
#                   reports another version; linking it again costs seconds)
#   test/containerd containerd containerd-shim-runc-v2 ctr (v2.2.x)
#   test/etcd       etcd (v3.6.x)
# Cached in $np_cache/bin/<key>/ (test/cachedir.sh: outside the clone), where <key> hashes this script and the three
# modules' go.mod/go.sum: a version change rebuilds, anything else reuses.
# A cold build takes 10-15 minutes on 2 cores (kubelet alone 6-10).
# With --cached it builds nothing: it prints the folder when every binary
# is there and fails otherwise (make test uses it to find containerd).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
key=$(cat "$0" "$repo"/test/{k8s,containerd,etcd}/go.{mod,sum} | sha256sum | cut -c1-16)
. "$repo/test/cachedir.sh"
out=${REALBIN_CACHE:-$np_cache/bin}/$key
log() { echo "realbin: $*" >&2; }
bins=(kubelet kube-apiserver kube-scheduler kube-controller-manager kubectl kubelet-canary containerd containerd-shim-runc-v2 ctr etcd)
have=1
for b in "${bins[@]}"; do [ -x "$out/$b" ] || have=0; done
if [ "$have" = 1 ]; then log "cached $out"; echo "$out"; exit 0; fi
if [ "${1:-}" = --cached ]; then log "not built yet: $out"; exit 1; fi
rm -rf "$out.tmp"; mkdir -p "$out.tmp"
t0=$SECONDS
export CGO_ENABLED=0 GOFLAGS=-trimpath
# The version the binaries report (without it: v0.0.0-master), read from
# the module graph so it cannot drift from go.mod.
k8sver=$(cd "$repo/test/k8s" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=$(echo "$k8sver" | cut -d. -f2)
v=k8s.io/component-base/version
k8sflags="-s -w -X $v.gitVersion=$k8sver -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z"
ctrver=$(cd "$repo/test/containerd" && go list -m -f '{{.Version}}' github.com/containerd/containerd/v2)
ctrflags="-s -w -X github.com/containerd/containerd/v2/version.Version=$ctrver"
(cd "$repo/test/containerd" && go build -ldflags "$ctrflags" -o "$out.tmp/" \
  github.com/containerd/containerd/v2/cmd/containerd \
  github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
  github.com/containerd/containerd/v2/cmd/ctr)
log "containerd $ctrver built ($((SECONDS - t0)) s)"
(cd "$repo/test/etcd" && go build -ldflags "-s -w" -o "$out.tmp/etcd" go.etcd.io/etcd/server/v3)
log "etcd built ($((SECONDS - t0)) s)"
for b in kubelet kube-apiserver kube-scheduler kube-controller-manager kubectl; do
  (cd "$repo/test/k8s" && go build -ldflags "$k8sflags" -o "$out.tmp/$b" "k8s.io/kubernetes/cmd/$b")
  log "$b $k8sver built ($((SECONDS - t0)) s)"
done
(cd "$repo/test/k8s" && go build -ldflags "${k8sflags/gitVersion=$k8sver/gitVersion=$k8sver+canary}" -o "$out.tmp/kubelet-canary" k8s.io/kubernetes/cmd/kubelet)
log "kubelet-canary $k8sver+canary built ($((SECONDS - t0)) s)"
# Drop other keys' binaries once they are a day old (a run in progress
# may still be using them).
find "$(dirname "$out")" -mindepth 1 -maxdepth 1 ! -name "$key" ! -name "$key.tmp" -mmin +1440 -exec rm -rf {} +
rm -rf "$out"; mv "$out.tmp" "$out"
log "built $out in $((SECONDS - t0)) s: $(du -sh "$out" | cut -f1)"
echo "$out"
