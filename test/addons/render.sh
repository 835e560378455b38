#!/usr/bin/env bash
# render.sh [KEY=VALUE...] [-- MANIFEST...] — print the add-on manifests
# (default: all of test/addons/manifests/*.yaml, in a fixed order) with
# their @KEY@ placeholders replaced, as one multi-document YAML stream for
# `kubectl apply -f -`. Keys without a default must be given; a placeholder
# left over, or a key that no manifest has, is an error (exit 2).
#
#   required: APISERVER      https://10.0.2.100:6443   kube-proxy's API server (its kubeconfig)
#             CLUSTER_CIDR   10.244.0.0/16             kube-controller-manager's --cluster-cidr (kube-proxy, flannel)
#             DNS_IP         10.96.0.10                Service kube-dns (kubelet's clusterDNS)
#   defaults: PROXY_MODE=nftables  CNI_BIN_DIR=/opt/cni/bin  CNI_CONF_DIR=/etc/cni/net.d
#             FLANNEL_NFTABLES=false  CLUSTER_DOMAIN=cluster.local  DNS_UPSTREAM=/etc/resolv.conf
#             DNS_REPLICAS=2  DEVICE_PLUGINS_DIR=/var/lib/kubelet/device-plugins  KUBELET_DIR=/var/lib/kubelet
#             ADDON_CPU=100m (flannel's and CoreDNS's CPU request, upstream's value)
#             AGENT_CPU=10m (node_exporter's and np-deviceplugin's, the chart's value)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
declare -A val=(
  [PROXY_MODE]=nftables [CNI_BIN_DIR]=/opt/cni/bin [CNI_CONF_DIR]=/etc/cni/net.d
  [FLANNEL_NFTABLES]=false [CLUSTER_DOMAIN]=cluster.local [DNS_UPSTREAM]=/etc/resolv.conf
  [DNS_REPLICAS]=2 [DEVICE_PLUGINS_DIR]=/var/lib/kubelet/device-plugins [KUBELET_DIR]=/var/lib/kubelet
  [ADDON_CPU]=100m [AGENT_CPU]=10m
)
required=(APISERVER CLUSTER_CIDR DNS_IP)
fail() { echo "render.sh: $*" >&2; exit 2; }
files=()
while [ $# -gt 0 ]; do
  case $1 in
    --) shift; files=("$@"); break ;;
    [A-Z]*=*) k=${1%%=*}; val[$k]=${1#*=} ;;
    *) fail "unexpected argument '$1' (want KEY=VALUE... [-- MANIFEST...])" ;;
  esac
  shift
done
all_files=0
if [ ${#files[@]} -eq 0 ]; then
  files=("$here"/manifests/{kube-proxy,flannel,coredns,node-exporter,np-deviceplugin,metrics-server}.yaml)
  all_files=1
fi
for k in "${required[@]}"; do [ -n "${val[$k]:-}" ] || fail "$k= is required"; done
case ${val[PROXY_MODE]} in nftables | iptables) ;; *) fail "PROXY_MODE must be nftables or iptables" ;; esac
case ${val[FLANNEL_NFTABLES]} in true | false) ;; *) fail "FLANNEL_NFTABLES must be true or false" ;; esac
for k in "${!val[@]}"; do
  case ${val[$k]} in "" | *[$'\n'\"\\]*) fail "$k: the value may not be empty or hold a newline, \" or \\" ;; esac
done
out=""
used=" "
for f in "${files[@]}"; do
  c=$(cat "$f")
  for k in "${!val[@]}"; do
    [[ $c == *"@$k@"* ]] && used+="$k "
    c=${c//"@$k@"/${val[$k]}}
  done
  if left=$(grep -o '@[A-Z_]*@' <<<"$c" | sort -u | tr '\n' ' ') && [ -n "$left" ]; then
    fail "$(basename "$f"): placeholders without a value: $left"
  fi
  [ -z "$out" ] || out+=$'\n---\n'
  out+=$c
done
if [ $all_files = 1 ]; then
  for k in "${!val[@]}"; do [[ $used == *" $k "* ]] || fail "no manifest has @$k@ (a misspelt key?)"; done
fi
printf '%s\n' "$out"
