#!/usr/bin/env bash
# seed.sh REALBIN IMAGE.tar... — a containerd root holding IMAGEs
# (namespace k8s.io, unpacked for the overlayfs snapshotter, their layer
# blobs discarded once unpacked) as one tar, built once natively by the
# real containerd and ctr of REALBIN and cached; prints the tar's path.
# Beside it, seed-<key>.images names the images the root holds, one a line.
#
# Why: the e2e's VMs have no registry, and importing the images there
# (`ctr images import`) is the same work natively a hundred times slower:
# under TCG 1-1.7 s per MiB, 390 s of boot v1's emulated core and 640 s
# of boot v2's (CI of 2026-12-07) for the same 300 MiB every run. So the
# guest starts each partition's containerd on this root instead (lib.sh
# seed_containerd), as a node image with its images pre-pulled does
# (kind's node images are built the same way): the containerd, the
# snapshotter and the images are the ones the guest would have made.
#
# Cached in $np_cache/e2e/seed-<key>.tar (test/cachedir.sh: outside the
# clone), <key> hashing this script, the images and the containerd and ctr
# binaries. Needs root (the snapshotter mounts nothing at import, but the
# layers' files keep their owners). Logs to stderr.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 REALBIN IMAGE.tar..." >&2; exit 2; }
realbin=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cachedir.sh"
log() { echo "seed: $*" >&2; }
key=$(cat "$0" "$realbin/containerd" "$realbin/ctr" "$@" | sha256sum | cut -c1-16)
out=$np_cache/e2e/seed-$key.tar
names=${out%.tar}.images
built() { [ -s "$out" ] && [ -s "$names" ]; }
if built; then log "cached $out"; echo "$out"; exit 0; fi
mkdir -p "$(dirname "$out")"
exec 8>"$out.lock"
flock 8
if built; then log "cached $out (built while waiting)"; echo "$out"; exit 0; fi

t0=$SECONDS
tmp=$(mktemp -d "$np_cache/e2e/seed.XXXXXX")
cpid=
cleanup() {
  [ -z "$cpid" ] || { kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null || true; }
  rm -rf "$tmp" "$out.tmp" "$names.tmp"
}
trap cleanup EXIT
sock=$tmp/state/containerd.sock
mkdir -p "$tmp/state"
# Only what the import needs: no CRI (its images come from this store
# when the guest's containerd starts), no NRI.
cat > "$tmp/config.toml" <<EOF
version = 3
root = "$tmp/root"
state = "$tmp/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.images", "io.containerd.cri.v1.runtime", "io.containerd.nri.v1.nri"]
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
EOF
start_containerd() {
  "$realbin/containerd" --config "$tmp/config.toml" >>"$tmp/containerd.log" 2>&1 &
  cpid=$!
  for _ in $(seq 100); do
    "$realbin/ctr" --address "$sock" version >/dev/null 2>&1 && return 0
    kill -0 "$cpid" 2>/dev/null || break
    sleep 0.2
  done
  log "containerd did not start:"; tail -20 "$tmp/containerd.log" >&2; return 1
}
stop_containerd() { kill "$cpid"; wait "$cpid" || true; cpid=; }
# ctr's warnings (cgroup v1 on this host) go to the log, shown on failure.
ctr() { "$realbin/ctr" --address "$sock" -n k8s.io "$@" 2>>"$tmp/ctr.log"; }

start_containerd
for image in "$@"; do
  ctr images import --local --discard-unpacked-layers "$image" >/dev/null \
    || { log "ctr images import $image failed:"; tail -20 "$tmp/ctr.log" "$tmp/containerd.log" >&2; exit 1; }
done
# containerd's garbage collector removes the discarded layer blobs soon
# after the imports, on its own schedule: the root is packed once only
# each image's manifest and config are left (the images are of one
# platform), within 30 s.
blobs() { ctr content ls -q | wc -l; }
for _ in $(seq 150); do [ "$(blobs)" -le $((2 * $#)) ] && break; sleep 0.2; done
[ "$(blobs)" -le $((2 * $#)) ] || { log "the discarded layers were not collected within 30 s: $(blobs) blobs for $# images"; exit 1; }
ctr images ls -q | LC_ALL=C sort > "$names.tmp"
kept=$(blobs)
stop_containerd
[ "$(wc -l <"$names.tmp")" -ge $# ] || { log "imported $# archives, the store holds: $(tr '\n' ' ' <"$names.tmp")"; exit 1; }
# The root as the guest's containerd finds it: the metadata, the
# content (manifests, configs) and the snapshots, owners and extended
# attributes kept.
tar -C "$tmp/root" --numeric-owner --xattrs --xattrs-include='*' -cf "$out.tmp" \
  io.containerd.metadata.v1.bolt io.containerd.content.v1.content io.containerd.snapshotter.v1.overlayfs
mv "$out.tmp" "$out"
mv "$names.tmp" "$names"
# Other keys' seeds go once a day old (a run in progress may use them).
find "$np_cache/e2e" -maxdepth 1 -name 'seed-*' ! -name "seed-$key.*" -mmin +1440 -delete
log "built $out in $((SECONDS - t0)) s: $(du -m "$out" | cut -f1) MiB, images $(tr '\n' ' ' <"$names")(content blobs kept, layers discarded: $kept)"
echo "$out"
