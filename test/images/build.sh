#!/usr/bin/env bash
# build.sh OUTDIR — build the e2e's two container images from our own static
# binaries, as OCI archives (the VM has no registry; test/e2e/seed.sh unpacks
# them into the containerd root its partitions start on; pods use
# imagePullPolicy: Never):
#   OUTDIR/pause.tar     e2e.local/pause:1     entrypoint /pause    (pod sandbox)
#   OUTDIR/workload.tar  e2e.local/workload:1  entrypoint /workload (prints cpus=… mems=…)
# Prints nothing but errors (on stderr). Idempotent: the same sources and Go
# toolchain give byte-identical archives, so the images' digests only change
# with the code. GOARCH picks the images' architecture (default: this machine's).
set -euo pipefail
if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here/../.." # the module root: the binaries use its go.mod (golang.org/x/sys)

arch=$(go env GOARCH)
# Static, stripped, no paths or VCS stamp in the binary: reproducible bytes.
for b in pause workload; do
  CGO_ENABLED=0 GOOS=linux GOARCH="$arch" go build -trimpath -buildvcs=false -ldflags '-s -w' \
    -o "$tmp/$b" "./test/images/$b"
done
# ocitar runs here, so it is built for this machine whatever GOARCH says.
CGO_ENABLED=0 GOOS=$(go env GOHOSTOS) GOARCH=$(go env GOHOSTARCH) go build -trimpath -buildvcs=false \
  -o "$tmp/ocitar" ./test/images/ocitar

"$tmp/ocitar" -o "$out/pause.tar" -name e2e.local/pause:1 -arch "$arch" \
  -entrypoint /pause -add /pause="$tmp/pause"
"$tmp/ocitar" -o "$out/workload.tar" -name e2e.local/workload:1 -arch "$arch" \
  -entrypoint /workload -add /workload="$tmp/workload"
