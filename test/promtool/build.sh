#!/usr/bin/env bash
# build.sh — build (once) Prometheus's promtool from the Go module proxy,
# static (CGO_ENABLED=0), stripped, and print its path. The module beside
# this script (test/promtool/go.mod) pins the version and keeps Prometheus's
# server code out of the product's go.mod.
# Cached in $np_cache/promtool/<key>/ (test/cachedir.sh: outside the clone),
# where <key> hashes this script and the module's go.mod/go.sum: a version
# change rebuilds, anything else reuses. It builds at nice 19, one package
# at a time (-p 1), so that it does not starve the tests beside it: minutes
# cold on 2 cores, seconds when Go's build cache holds its packages.
# With --cached it builds nothing: it prints the path when the binary is
# there and fails otherwise (make test uses it to find promtool; the test
# that needs it skips loudly without it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
key=$(cat "$0" "$here"/go.{mod,sum} | sha256sum | cut -c1-16)
. "$repo/test/cachedir.sh"
out=${PROMTOOL_CACHE:-$np_cache/promtool}/$key
log() { echo "promtool: $*" >&2; }
if [ -x "$out/promtool" ]; then log "cached $out/promtool"; echo "$out/promtool"; exit 0; fi
if [ "${1:-}" = --cached ]; then log "not built yet: $out"; exit 1; fi
rm -rf "$out.tmp"; mkdir -p "$out.tmp"
t0=$SECONDS
export CGO_ENABLED=0 GOFLAGS=-trimpath
ver=$(cd "$here" && go list -m -f '{{.Version}}' github.com/prometheus/prometheus)
# promtool --version reads common's version package; without it: "unknown".
flags="-s -w -X github.com/prometheus/common/version.Version=${ver#v}"
# remove_all_sd (Prometheus's own build tag, plugins/) leaves out the
# cloud service discoveries (AWS, Azure, GCE, …: most of the build), which
# check metrics and check/test rules never use.
(cd "$here" && nice -n 19 go build -p 1 -tags remove_all_sd -ldflags "$flags" -o "$out.tmp/promtool" github.com/prometheus/prometheus/cmd/promtool)
# Drop other keys' builds once they are a day old (a run in progress may
# still be using them).
find "$(dirname "$out")" -mindepth 1 -maxdepth 1 ! -name "$key" ! -name "$key.tmp" -mmin +1440 -exec rm -rf {} +
rm -rf "$out"; mv "$out.tmp" "$out"
log "built $out/promtool ($ver) in $((SECONDS - t0)) s"
echo "$out/promtool"
