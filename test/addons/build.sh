#!/usr/bin/env bash
# build.sh [--cached] — build (once) the cluster add-ons the e2e runs on its
# partitions, as static binaries and OCI image archives for
# `ctr -n k8s.io images import` (no registry; manifests say
# imagePullPolicy: Never), and print the folder that holds them:
#   images/kube-proxy.tar       e2e.local/kube-proxy:v1.37.2     kube-proxy + nft, iptables (nft and legacy)
#   images/flannel.tar          e2e.local/flannel:v0.28.10       flanneld, install-conf, /flannel (CNI plugin) + nft, iptables
#   images/coredns.tar          e2e.local/coredns:v1.15.0        coredns
#   images/node-exporter.tar    e2e.local/node-exporter:v1.12.1  node_exporter
#   images/np-deviceplugin.tar  e2e.local/np-deviceplugin:1      our device plugin + CSI node plugin
#   images/metrics-server.tar   e2e.local/metrics-server:v0.8.0  metrics-server (kubectl top)
#   bin/                        the static binaries (CGO_ENABLED=0 but flanneld, stripped, versions stamped)
#   images.tsv                  archive, image name, bytes
#   debs.tsv                    the Debian packages the netfilter userland came from
# Each upstream project is a Go module of its own under test/addons/ (their
# dependencies differ, and none belongs in the product's go.mod); the
# netfilter userland (nft, iptables-nft, iptables-legacy and their
# libraries) comes from Debian bookworm's .debs (apt-get download, dpkg -x),
# programs and their DT_NEEDED closure only (tools/elfdeps).
# Cached in $np_cache/addons/<key>/ (test/cachedir.sh: outside the clone), where <key> hashes this script, the
# modules' go.mod/go.sum and Go sources, and ocitar: a version change
# rebuilds, anything else reuses. With --cached it builds nothing: it prints
# the folder when everything is there and fails otherwise.
# Logs go to stderr; stdout is the folder alone.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
log() { echo "addons: $*" >&2; }
mods=(k8s flannel cni coredns nodeexporter deviceplugin metricsserver tools)
inputs=("$0" "$repo/test/images/ocitar/main.go")
for m in "${mods[@]}"; do
  inputs+=("$here/$m/go.mod")
  [ -f "$here/$m/go.sum" ] && inputs+=("$here/$m/go.sum")
  while IFS= read -r f; do inputs+=("$f"); done < <(find "$here/$m" -name '*.go' ! -name '*_test.go' | LC_ALL=C sort)
done
key=$(cat "${inputs[@]}" | sha256sum | cut -c1-16)
. "$repo/test/cachedir.sh"
out=${ADDONS_CACHE:-$np_cache/addons}/$key
images=(kube-proxy flannel coredns node-exporter np-deviceplugin metrics-server)
built() {
  local i
  for i in "${images[@]}"; do [ -s "$out/images/$i.tar" ] || return 1; done
  [ -s "$out/images.tsv" ]
}
if built; then log "cached $out"; echo "$out"; exit 0; fi
if [ "${1:-}" = --cached ]; then log "not built yet: $out"; exit 1; fi
[ $# -eq 0 ] || { echo "usage: $0 [--cached]" >&2; exit 2; }

# One build of a key at a time; a second one waits, then finds it built.
mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
flock 9
if built; then log "cached $out (built while waiting)"; echo "$out"; exit 0; fi
tmp=$out.tmp
rm -rf "$tmp"; mkdir -p "$tmp"/{bin,images,debs,root,tools}
trap 'rm -rf "$tmp"' EXIT # a failed build leaves nothing half done
t0=$SECONDS
export CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false"
ver() { (cd "$here/$1" && go list -m -f '{{.Version}}' "$2"); }

# The netfilter userland: Debian bookworm's packages, unpacked side by side.
debs=(nftables libnftables1 libedit2 libbsd0 libmd0 libtinfo6 libgmp10 libjansson4 libmnl0 libnftnl11
  libxtables12 iptables libip4tc2 libip6tc2 libnetfilter-conntrack3 libnfnetlink0 libc6 netbase)
download() { (cd "$tmp/debs" && apt-get -q=2 -o APT::Sandbox::User=root download "${debs[@]}" >&2); }
if ! download; then
  log "apt-get download failed: apt-get update, then once more"
  apt-get -q=2 update >&2
  download
fi
for d in "$tmp"/debs/*.deb; do
  dpkg-deb -x "$d" "$tmp/root"
  printf '%s\t%s\t%s\n' "$(dpkg-deb -f "$d" Package)" "$(dpkg-deb -f "$d" Version)" "$(basename "$d")" >>"$tmp/debs.tsv"
done
log "${#debs[@]} Debian packages unpacked ($((SECONDS - t0)) s)"

(cd "$here/tools" && go build -o "$tmp/tools/" ./elfdeps)

# kube-proxy, stamped like test/realbin's Kubernetes binaries.
k8sver=$(ver k8s k8s.io/kubernetes)
v=k8s.io/component-base/version
(cd "$here/k8s" && go build -o "$tmp/bin/kube-proxy" \
  -ldflags "-s -w -X $v.gitVersion=$k8sver -X $v.gitMajor=1 -X $v.gitMinor=$(echo "$k8sver" | cut -d. -f2) -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z" \
  k8s.io/kubernetes/cmd/kube-proxy)
log "kube-proxy $k8sver built ($((SECONDS - t0)) s)"

flver=$(ver flannel github.com/flannel-io/flannel)
# flanneld's udp backend is C on amd64 (pkg/backend/udp/proxy_amd64.c), and
# main.go imports every backend: upstream builds it with cgo, statically
# (Makefile: CGO_ENABLED=1 on amd64, -extldflags -static), and so do we, with
# Go's own resolver and user lookup so that no glibc NSS code is linked in.
# It needs gcc and libc6-dev; every other binary here is CGO_ENABLED=0.
flcgo=0
[ "$(go env GOARCH)" = amd64 ] && flcgo=1
(cd "$here/flannel" && CGO_ENABLED=$flcgo go build -tags netgo,osusergo -o "$tmp/bin/flanneld" \
  -ldflags "-s -w -X github.com/flannel-io/flannel/pkg/version.Version=$flver -extldflags -static" github.com/flannel-io/flannel &&
  go build -o "$tmp/bin/install-conf" -ldflags "-s -w" github.com/flannel-io/flannel/cmd/install_conf)
cniver=$(ver cni github.com/containernetworking/plugins)
(cd "$here/cni" && go build -o "$tmp/bin/flannel" -ldflags "-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$cniver" \
  github.com/containernetworking/plugins/plugins/meta/flannel)
log "flanneld $flver, flannel CNI plugin $cniver built ($((SECONDS - t0)) s)"

cdver=$(ver coredns github.com/coredns/coredns)
(cd "$here/coredns" && go build -o "$tmp/bin/coredns" -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$cdver" .)
log "coredns $cdver built ($((SECONDS - t0)) s)"

nev=$(ver nodeexporter github.com/prometheus/node_exporter)
pv=github.com/prometheus/common/version
(cd "$here/nodeexporter" && go build -o "$tmp/bin/node_exporter" \
  -ldflags "-s -w -X $pv.Version=${nev#v} -X $pv.Revision=$nev -X $pv.Branch=$nev -X $pv.BuildUser=numa-partition -X $pv.BuildDate=19700101-00:00:00" \
  github.com/prometheus/node_exporter)
log "node_exporter $nev built ($((SECONDS - t0)) s)"

(cd "$here/deviceplugin" && go build -o "$tmp/bin/np-deviceplugin" -ldflags "-s -w -X main.version=$key" .)
log "np-deviceplugin built ($((SECONDS - t0)) s)"

# metrics-server, stamped as its Makefile does (client-go's version package).
msver=$(ver metricsserver sigs.k8s.io/metrics-server)
cv=k8s.io/client-go/pkg/version
(cd "$here/metricsserver" && go build -o "$tmp/bin/metrics-server" \
  -ldflags "-s -w -X $cv.gitVersion=$msver -X $cv.gitCommit=$msver -X $cv.buildDate=1970-01-01T00:00:00Z" \
  sigs.k8s.io/metrics-server/cmd/metrics-server)
log "metrics-server $msver built ($((SECONDS - t0)) s)"

# What every netfilter image holds: nft; iptables/ip6tables and their
# -save/-restore, nft-backed under their plain names (as Debian's
# alternatives default and the host's kube-proxy would use) and under -nft,
# legacy under -legacy — copies of the two multi-call programs, which
# dispatch on their name (ocitar writes regular files only); the xtables
# extensions libxtables loads at run time; /etc/protocols and /etc/services;
# and the libraries all of these need.
R=$tmp/root
netfilter=(/usr/sbin/nft=$R/usr/sbin/nft /etc/protocols=$R/etc/protocols /etc/services=$R/etc/services)
for fam in iptables ip6tables; do
  for s in "" -save -restore; do
    netfilter+=("/usr/sbin/$fam$s=$R/usr/sbin/xtables-nft-multi" "/usr/sbin/$fam-nft$s=$R/usr/sbin/xtables-nft-multi"
      "/usr/sbin/$fam-legacy$s=$R/usr/sbin/xtables-legacy-multi")
  done
done
exts=()
for f in "$R"/usr/lib/x86_64-linux-gnu/xtables/lib{xt,ipt,ip6t}_*.so; do
  exts+=("/usr/lib/x86_64-linux-gnu/xtables/$(basename "$f")")
  netfilter+=("/usr/lib/x86_64-linux-gnu/xtables/$(basename "$f")=$f")
done
while IFS= read -r a; do netfilter+=("$a"); done < <("$tmp/tools/elfdeps" -root "$R" \
  /usr/sbin/nft /usr/sbin/xtables-nft-multi /usr/sbin/xtables-legacy-multi "${exts[@]}")

ocitar() { (cd "$repo" && go run ./test/images/ocitar "$@"); }
arch=$(go env GOARCH)
B=$tmp/bin
ocitar -o "$tmp/images/kube-proxy.tar" -name "e2e.local/kube-proxy:$k8sver" -arch "$arch" \
  -entrypoint /usr/local/bin/kube-proxy -add "/usr/local/bin/kube-proxy=$B/kube-proxy" "${netfilter[@]/#/-add=}"
ocitar -o "$tmp/images/flannel.tar" -name "e2e.local/flannel:$flver" -arch "$arch" \
  -entrypoint /opt/bin/flanneld -add "/opt/bin/flanneld=$B/flanneld" -add "/opt/bin/install-conf=$B/install-conf" \
  -add "/flannel=$B/flannel" "${netfilter[@]/#/-add=}"
ocitar -o "$tmp/images/coredns.tar" -name "e2e.local/coredns:$cdver" -arch "$arch" -entrypoint /coredns -add "/coredns=$B/coredns"
ocitar -o "$tmp/images/node-exporter.tar" -name "e2e.local/node-exporter:$nev" -arch "$arch" \
  -entrypoint /bin/node_exporter -add "/bin/node_exporter=$B/node_exporter"
ocitar -o "$tmp/images/np-deviceplugin.tar" -name "e2e.local/np-deviceplugin:1" -arch "$arch" \
  -entrypoint /np-deviceplugin -add "/np-deviceplugin=$B/np-deviceplugin"
ocitar -o "$tmp/images/metrics-server.tar" -name "e2e.local/metrics-server:$msver" -arch "$arch" \
  -entrypoint /metrics-server -add "/metrics-server=$B/metrics-server"
names=("e2e.local/kube-proxy:$k8sver" "e2e.local/flannel:$flver" "e2e.local/coredns:$cdver" "e2e.local/node-exporter:$nev" "e2e.local/np-deviceplugin:1" "e2e.local/metrics-server:$msver")
for n in "${!images[@]}"; do
  sz=$(stat -c %s "$tmp/images/${images[$n]}.tar")
  printf '%s.tar\t%s\t%s\n' "${images[$n]}" "${names[$n]}" "$sz" >>"$tmp/images.tsv"
  log "image ${names[$n]}: images/${images[$n]}.tar $((sz / 1048576)) MiB ($sz bytes)"
done
rm -rf "$tmp/root" "$tmp/tools"

# Drop other keys' builds once they are a day old (a run in progress may
# still be using them).
find "$(dirname "$out")" -mindepth 1 -maxdepth 1 ! -name "$key" ! -name "$key.tmp" ! -name "$key.lock" -mmin +1440 -exec rm -rf {} +
rm -rf "$out"; mv "$tmp" "$out"
log "built $out in $((SECONDS - t0)) s: $(du -sh "$out" | cut -f1) (images $(du -sh "$out/images" | cut -f1))"
echo "$out"
