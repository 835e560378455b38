#!/usr/bin/env bash
# selftest.sh — check the add-ons test/addons/build.sh built, on this host,
# without a VM or a container runtime (root: chroot and scratch network
# namespaces from unshare -n, which touch nothing of the host's network):
#   images     every archive is a well-formed OCI layout (ociunpack checks
#              each blob's digest and the layers' diff_ids), named as
#              images.tsv says, its entrypoint in it; unpacked for the rest
#   versions   each program, run from its unpacked image, reports the
#              version built (kube-proxy, flanneld, coredns, node_exporter,
#              np-deviceplugin, the flannel CNI plugin)
#   netfilter  nft, iptables/ip6tables (nft and legacy), -save, -restore
#              from the kube-proxy and flannel images run in a chroot, and
#              in a scratch network namespace write the kinds of rules
#              kube-proxy and flanneld write
#   config     kube-proxy accepts the rendered KubeProxyConfiguration
#              (strict decoding and its own validation: --write-config-to)
#   coredns    every plugin the Corefile uses is compiled in
#   exporter   node_exporter serves /metrics on :9100 in a scratch netns
#   manifests  go test in test/addons/k8s: the rendered manifests decode
#              strictly and pass Kubernetes 1.37.2's validation; the images
#              they name are the ones built
#   plugin     go test in test/addons/deviceplugin: registration with a
#              fake kubelet (device plugin and CSI registration)
#   cluster    the rendered manifests applied to test/e2e/cluster's real
#              control plane (other ports than the e2e's), when
#              test/realbin/build.sh has built it: all objects taken, the
#              DaemonSets' pods on a fake Node, the RBAC in force
# Prints one line per check and "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "selftest.sh: needs root (chroot, unshare -n)" >&2; exit 2; }
out=$("$here/build.sh" --cached) || { echo "selftest.sh: run test/addons/build.sh first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf --one-file-system "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok    $*"; }
bad() { fail=$((fail + 1)); echo "FAIL  $*"; }
# expect NAME WANT CMD...: CMD's output (stdout and stderr) contains WANT.
expect() {
  local name=$1 want=$2 got
  shift 2
  if got=$("$@" 2>&1) && [[ $got == *"$want"* ]]; then
    ok "$name: $(head -1 <<<"$got" | cut -c1-100)"
  else
    bad "$name: want '$want', got: $(head -3 <<<"$got" | tr '\n' ' ' | cut -c1-300)"
  fi
}
vers() { sed -n "s|^\t$2 \(v[^ ]*\).*|\1|p;s|^require $2 \(v[^ ]*\)$|\1|p" "$here/$1/go.mod" | head -1; }
k8sver=$(vers k8s k8s.io/kubernetes) flver=$(vers flannel github.com/flannel-io/flannel)
cniver=$(vers cni github.com/containernetworking/plugins) cdver=$(vers coredns github.com/coredns/coredns)
nev=$(vers nodeexporter github.com/prometheus/node_exporter)

(cd "$here/tools" && go build -o "$tmp/" ./ociunpack) || { echo "selftest.sh: cannot build ociunpack" >&2; exit 2; }
declare -A root
while IFS=$'\t' read -r file name size; do
  r=$tmp/${file%.tar}
  if got=$("$tmp/ociunpack" -o "$r" "$out/images/$file" 2>&1) && [[ $got == "name=$name entrypoint="* ]]; then
    ep=$(sed -n 's/.* entrypoint=\([^ ]*\) .*/\1/p' <<<"$got")
    if [ -x "$r$ep" ] && [ "$(stat -c %s "$out/images/$file")" = "$size" ]; then
      ok "image $name: $file $((size / 1048576)) MiB, entrypoint $ep"
      root[${file%.tar}]=$r
      mkdir -p "$r/run" "$r/tmp"
    else
      bad "image $name: entrypoint $ep not executable in it, or size not $size"
    fi
  else
    bad "image $file: $got"
  fi
done <"$out/images.tsv"
want=$(grep -c . "$out/images.tsv")
[ ${#root[@]} = "$want" ] || bad "images: ${#root[@]} of $want unpacked"
inimg() { local r=${root[$1]:-/nonexistent}; shift; chroot "$r" "$@"; }

expect "version kube-proxy" "Kubernetes $k8sver" inimg kube-proxy /usr/local/bin/kube-proxy --version
expect "version flanneld" "$flver" inimg flannel /opt/bin/flanneld --version
expect "version flannel CNI plugin" "CNI flannel plugin $cniver" inimg flannel /flannel --version
expect "flannel CNI plugin speaks CNI 0.4.0" '"0.4.0"' env CNI_COMMAND=VERSION chroot "${root[flannel]:-/x}" /flannel
expect "install-conf copies" "" inimg flannel /opt/bin/install-conf /flannel /tmp/flannel
[ -x "${root[flannel]:-/x}/tmp/flannel" ] && ok "install-conf kept the mode" || bad "install-conf did not keep the executable mode"
expect "version coredns" "CoreDNS-${cdver#v}" inimg coredns /coredns -version
expect "version node_exporter" "version ${nev#v}" inimg node-exporter /bin/node_exporter --version
expect "version np-deviceplugin" "np-deviceplugin" inimg np-deviceplugin /np-deviceplugin --version

for img in kube-proxy flannel; do
  expect "$img: nft" "nftables v1.0.6" inimg $img /usr/sbin/nft --version
  for fam in iptables ip6tables; do
    for s in "" -save -restore; do
      expect "$img: $fam$s" "(nf_tables)" inimg $img /usr/sbin/$fam$s --version
      expect "$img: $fam-nft$s" "(nf_tables)" inimg $img /usr/sbin/$fam-nft$s --version
      expect "$img: $fam-legacy$s" "(legacy)" inimg $img /usr/sbin/$fam-legacy$s --version
    done
  done
  # The rules themselves, in a network namespace of their own: kube-proxy's
  # nftables table and its iptables chains (comment, statistic, DNAT,
  # conntrack, mark, MASQUERADE need the xtables extensions), flanneld's
  # masquerade and forward rules.
  r=${root[$img]:-/nonexistent}
  expect "$img: nft writes a kube-proxy-like table (scratch netns)" "ip daddr 10.96.0.1 tcp dport 443" unshare -n sh -c "
    chroot '$r' /usr/sbin/nft -f - <<'EOF' && chroot '$r' /usr/sbin/nft list table ip kube-proxy
table ip kube-proxy {
  comment \"rules for kube-proxy\"
  map service-ips { type ipv4_addr . inet_proto . inet_service : verdict; }
  chain services { ip daddr . meta l4proto . th dport vmap @service-ips; }
  chain nat-prerouting { type nat hook prerouting priority dstnat; jump services; }
  chain svc-1 { ip daddr 10.96.0.1 tcp dport 443 dnat to 10.0.2.100:6443; }
  chain mark-for-masquerade { meta mark set meta mark or 0x4000; }
  chain nat-postrouting { type nat hook postrouting priority srcnat; meta mark & 0x4000 == 0x4000 masquerade fully-random; }
}
EOF"
  expect "$img: iptables-nft writes kube-proxy's and flanneld's rules (scratch netns)" "-j MASQUERADE --random-fully" unshare -n sh -c "
    set -e
    ipt() { chroot '$r' /usr/sbin/iptables -w 5 \"\$@\"; }
    ipt -t nat -N KUBE-SERVICES
    ipt -t nat -A PREROUTING -m comment --comment 'kubernetes service portals' -j KUBE-SERVICES
    ipt -t nat -A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m tcp --dport 443 -m statistic --mode random --probability 0.5 -j DNAT --to-destination 10.0.2.100:6443
    ipt -t filter -A FORWARD -m conntrack --ctstate INVALID -j DROP
    ipt -t nat -A POSTROUTING -m mark --mark 0x4000/0x4000 -j MASQUERADE --random-fully
    ipt -t filter -A FORWARD -s 10.244.0.0/16 -m comment --comment 'flanneld forward' -j ACCEPT
    ipt -t nat -A POSTROUTING -s 10.244.0.0/16 ! -d 224.0.0.0/4 -m comment --comment 'flanneld masq' -j MASQUERADE --random-fully
    chroot '$r' /usr/sbin/ip6tables -t nat -N KUBE-SERVICES
    chroot '$r' /usr/sbin/iptables-save -t nat | chroot '$r' /usr/sbin/iptables-restore --test
    chroot '$r' /usr/sbin/iptables-save"
done

# kube-proxy's own decoder and validation on the rendered config.conf.
"$here/render.sh" APISERVER=https://10.0.2.100:6443 CLUSTER_CIDR=10.244.0.0/16 DNS_IP=10.96.0.10 \
  -- "$here/manifests/kube-proxy.yaml" >"$tmp/kube-proxy.yaml"
awk '/^  config.conf: \|-$/ {on = 1; next} on && /^    / {print substr($0, 5); next} on && /^[^ ]/ {on = 0}' \
  "$tmp/kube-proxy.yaml" >"${root[kube-proxy]:-$tmp}/config.conf"
if got=$(inimg kube-proxy /usr/local/bin/kube-proxy --config=/config.conf --hostname-override=e2e-v2-node0 \
  --write-config-to=/written.conf 2>&1) && ! grep -qi lenient <<<"$got" &&
  grep -q '^mode: nftables$' "${root[kube-proxy]}/written.conf" &&
  grep -q '^clusterCIDR: 10.244.0.0/16$' "${root[kube-proxy]}/written.conf"; then
  ok "config: kube-proxy $k8sver accepts the rendered KubeProxyConfiguration (strictly; mode nftables)"
else
  bad "config: kube-proxy refuses the rendered config.conf: $(tail -3 <<<"$got")"
fi

plugins=$(inimg coredns /coredns -plugins 2>&1)
for p in errors health ready kubernetes prometheus forward cache loop reload loadbalance; do
  grep -qx "$p" <<<"$plugins" || missing+=" $p"
done
[ -z "${missing:-}" ] && ok "coredns: the Corefile's plugins are compiled in" || bad "coredns: not compiled in:$missing"

# With the DaemonSet's flags: the host's /proc and /sys bound at /host/ in
# a mount namespace of its own (which goes with the shell; not the host's
# /, which the DaemonSet also mounts: the filesystem collector then reports
# errors for the mount points it cannot see, and the rest works).
r=${root[node-exporter]:-/x}
mkdir -p "$r/host/proc" "$r/host/sys" "$r/host/root"
expect "exporter: node_exporter serves :9100 with the DaemonSet's flags (scratch netns)" "node_exporter_build_info{" unshare -n -m sh -c "
  set -e
  ip link set lo up
  mount --make-rprivate /
  mount --bind /proc '$r/host/proc'; mount --bind /sys '$r/host/sys'
  chroot '$r' /bin/node_exporter --path.procfs=/host/proc --path.sysfs=/host/sys --path.rootfs=/host/root \
    --web.listen-address=127.0.0.1:9100 >/dev/null 2>&1 &
  pid=\$!
  for i in 1 2 3 4 5 6 7 8 9 10; do curl -fsS http://127.0.0.1:9100/metrics 2>/dev/null | grep -m1 '^node_exporter_build_info{' && break; sleep 0.5; done
  kill \$pid"

# The images the manifests name are the ones built.
"$here/render.sh" APISERVER=https://10.0.2.100:6443 CLUSTER_CIDR=10.244.0.0/16 DNS_IP=10.96.0.10 >"$tmp/all.yaml"
want=$(cut -f2 "$out/images.tsv" | sort -u | tr '\n' ' ')
got=$(sed -n 's/^ *image: //p' "$tmp/all.yaml" | sort -u | tr '\n' ' ')
[ "$want" = "$got" ] && ok "manifests name the images built: $got" || bad "manifests name '$got', build has '$want'"

if got=$(cd "$here/k8s" && go test -count=1 ./... 2>&1); then ok "manifests: go test (test/addons/k8s): $(tail -1 <<<"$got")"; else
  bad "manifests: go test (test/addons/k8s):"; echo "$got"; fi
if got=$(cd "$here/deviceplugin" && go test -count=1 -race ./... 2>&1); then ok "plugin: go test -race (test/addons/deviceplugin): $(tail -1 <<<"$got")"; else
  bad "plugin: go test (test/addons/deviceplugin):"; echo "$got"; fi

# The manifests against a real API server: test/e2e/cluster's throw-away
# control plane (Kubernetes 1.37.2, kubeadm's flags and RBAC) on other
# loopback ports than the e2e's, when test/realbin/build.sh has built it.
# kubectl apply for real (a Namespace must exist before its objects, which a
# server-side dry run does not give), then: every object is there, a fake
# Node gets one pod of each DaemonSet (through admission and the
# scheduler), CoreDNS's pods are created, and the service accounts may do
# what their components need.
cluster_check() {
  local bin=$1 st=$tmp/cluster k
  export E2E_APISERVER_PORT=16443 E2E_ETCD_PORT=22379 E2E_ETCD_PEER_PORT=22380 E2E_KCM_PORT=20257 E2E_SCHEDULER_PORT=20259
  if ! "$repo/test/e2e/cluster/up.sh" "$bin" "$st" >"$tmp/up.log" 2>&1; then
    bad "cluster: test/e2e/cluster/up.sh failed: $(tail -3 "$tmp/up.log" | tr '\n' ' ')"
    return
  fi
  trap '"$repo/test/e2e/cluster/down.sh" "$st" >/dev/null 2>&1; rm -rf --one-file-system "$tmp"' EXIT
  k() { "$bin/kubectl" --kubeconfig "$st/out/admin-host.conf" "$@"; }
  local objects
  objects=$(grep -c '^kind:' "$tmp/all.yaml")
  if got=$(k apply -f "$tmp/all.yaml" 2>&1) && [ "$(grep -c ' created$' <<<"$got")" = "$objects" ]; then
    ok "cluster: kube-apiserver $k8sver takes all $objects objects (kubectl apply)"
  else
    bad "cluster: kubectl apply: $got"
  fi
  k apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: selftest-node
  labels: {kubernetes.io/os: linux, kubernetes.io/hostname: selftest-node}
EOF
  # Room for pods: what a kubelet would report (without it the scheduler
  # binds nothing: "Too many pods").
  k patch node selftest-node --subresource=status --type=merge \
    -p '{"status":{"capacity":{"cpu":"4","memory":"8Gi","pods":"110"},"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}}' >/dev/null
  local want="kube-flannel/kube-flannel-ds kube-system/kube-proxy kube-system/node-exporter kube-system/np-deviceplugin" pods=""
  for _ in $(seq 60); do
    pods=$(k get pods -A --field-selector spec.nodeName=selftest-node \
      -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].kind} {.metadata.namespace}/{.metadata.ownerReferences[0].name}{"\n"}{end}' 2>/dev/null |
      sed -n 's/^DaemonSet //p' | sort | tr '\n' ' ')
    [ "$pods" = "$want " ] && break
    sleep 1
  done
  [ "$pods" = "$want " ] && ok "cluster: each DaemonSet has its pod on a fake Node (tolerations, admission, scheduler): $pods" ||
    bad "cluster: DaemonSet pods on the fake Node after 60 s: '$pods', want '$want'"
  n=$(k -n kube-system get pods -l k8s-app=kube-dns -o name 2>/dev/null | wc -l)
  [ "$n" = 2 ] && ok "cluster: CoreDNS's Deployment created its 2 pods" || bad "cluster: CoreDNS pods: $n, want 2"
  local can
  for can in "kube-system:kube-proxy list endpointslices.discovery.k8s.io" "kube-system:kube-proxy watch services" \
    "kube-flannel:flannel patch nodes --subresource=status" "kube-flannel:flannel list nodes" \
    "kube-system:coredns watch endpointslices.discovery.k8s.io" "kube-system:coredns list namespaces"; do
    set -- $can
    if [ "$(k auth can-i "${@:2}" --as="system:serviceaccount:$1" 2>/dev/null)" = yes ]; then
      ok "cluster: system:serviceaccount:$1 may ${*:2}"
    else
      bad "cluster: system:serviceaccount:$1 may not ${*:2}"
    fi
  done
  "$repo/test/e2e/cluster/down.sh" "$st" >/dev/null 2>&1 || bad "cluster: down.sh failed"
  trap 'rm -rf --one-file-system "$tmp"' EXIT
}
repo=$(cd "$here/../.." && pwd)
if bin=$("$repo/test/realbin/build.sh" --cached 2>/dev/null); then
  cluster_check "$bin"
else
  skip=1
  echo "SKIP  cluster: test/realbin/build.sh has not built the control plane (run it for the API server checks)"
fi

echo "selftest: $pass passed, $fail failed${skip:+, $skip skipped}"
[ "$fail" = 0 ]
