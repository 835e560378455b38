#!/usr/bin/env bash
# aligned.sh — the modules that compile Kubernetes' libraries select the
# versions this module (test/k8s, the real binaries' build) selects, for
# every module they share: the product (client-go, k8s.io/api, …),
# test/tmcompare (kubelet's Topology Manager) and test/addons/k8s
# (kube-proxy). Go's build cache then holds one compiled copy of each
# shared package (every build here is CGO_ENABLED=0 with -trimpath), and a
# cold CI run compiles Kubernetes' packages once, for kubelet, instead of
# once per module (tmcompare alone was about 10 minutes of its two cores).
# A module upgraded in one place only fails here, naming it; upgrade it
# everywhere (test/k8s first: it follows the Kubernetes release).
# Not metrics-server: v0.8.0 builds on Kubernetes 1.37.2's libraries but
# panics at start (its generated OpenAPI names its types as 0.33 did:
# "cannot find model definition for
# io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics", the e2e's step
# metrics, 2026-12-06), so it keeps its own; nor CoreDNS, whose v1.15.0
# requires newer x/net, grpc and protobuf than Kubernetes 1.37.2.
# Package lists only (go list -deps, no compiling): seconds, once the
# modules are downloaded.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
# modules MODULE-DIR PACKAGE...: the modules whose packages that build
# compiles (-deps), with the versions it selects, one "path version" a line.
modules() {
  local dir=$1; shift
  (cd "$dir" && CGO_ENABLED=0 go list -deps -f '{{with .Module}}{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}{{end}}' "$@") \
    | awk 'NF == 2' | LC_ALL=C sort -u
}
ref=$(modules test/k8s k8s.io/kubernetes/cmd/{kubelet,kube-apiserver,kube-scheduler,kube-controller-manager,kubectl})
bad=0
# check MODULE-DIR PACKAGE...: every module that build compiles a package
# of, and the real binaries' build too, at the real binaries' version.
check() {
  local dir=$1 mod want got
  while read -r mod want got; do
    echo "aligned: $dir compiles $mod $got, the real binaries (test/k8s) $want" >&2
    bad=1
  done < <(LC_ALL=C join <(echo "$ref") <(modules "$@") | awk '$2 != $3')
}
check . ./...
check test/tmcompare -test ./...
check test/addons/k8s k8s.io/kubernetes/cmd/kube-proxy
if [ "$bad" = 1 ]; then
  echo "aligned: set these to test/k8s's versions (go mod edit -require, or the replace block for k8s.io/*), then go mod tidy: test/k8s/aligned.sh says why" >&2
  exit 1
fi
echo "aligned: the product, test/tmcompare and kube-proxy compile every module they share with the real binaries at the real binaries' version"
