#!/usr/bin/env bash
# run.sh — what partitions cost the control plane. For H hosts of P
# partitions each (P in SCALE_PARTITIONS), registers H×P simulated Nodes
# named and labelled as numa-partition names and labels them
# (<host>-<partition>, numa-partition.io/host, numa-partition.io/partition,
# numa-type), each with a Lease renewed every 10 s (kubelet's default, by
# KWOK's node lease controller) and its DaemonSet pods, against the e2e's
# real control plane (test/e2e/cluster/up.sh: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, v1.37.2). In steady state it
# measures, over SCALE_WINDOW seconds: CPU (cores) and RSS of each
# component, Lease writes/s, mutating requests/s, open watches, stored
# objects, etcd's database size, and the p99 latency of mutating
# single-object calls (SIG Scalability's SLI; SLO ≤ 1 s). At the largest
# configuration it then re-partitions one host (deletes its P Nodes, their
# pods and Leases; TLS-bootstraps SCALE_REPARTITION_TO new ones: a CSR each,
# approved and signed) and times it. See docs/scale.md.
#
# The DaemonSet pods are KWOK pods bound to their Node (spec.nodeName set,
# SCALE_PODS_PER_NODE of them: kube-proxy, a CNI agent, node_exporter), not
# DaemonSets the controller-manager fans out: its client is limited to 20
# requests/s, which would take minutes per thousand Nodes to create what is
# in steady state the same set of objects.
#
# Each configuration gets a control plane of its own (a fresh etcd), which
# is stopped when it is measured. Results: SCALE_OUT (default
# .cache/scale/<time>/) results.tsv, results.md (printed at the end),
# repartition.tsv, the clusters' logs.
#
# Environment (defaults):
#   SCALE_HOSTS           250      hosts per configuration (Nodes = hosts × P)
#   SCALE_PARTITIONS      "1 2 4 8"  partitions per host, one configuration each
#   SCALE_MAX_NODES       4000     configurations with more Nodes are skipped
#   SCALE_PODS_PER_NODE   3        DaemonSet pods per Node
#   SCALE_REPARTITION_TO  4        partitions the re-partitioned host ends with ("" skips it)
#   SCALE_WINDOW          60       seconds measured in steady state
#   SCALE_SETTLE          30       seconds waited after every Node and pod is ready
#   SCALE_NODE_STATUS_S   300      period of each Node's status update (kubelet's nodeStatusReportFrequency, 5 min)
#   SCALE_BUDGET          1200     wall-clock cap of the whole run, seconds: a configuration that would start past it is skipped, a wait that would end past it fails
#   SCALE_TIMEOUT         600      cap of each single wait, seconds
#   SCALE_AGENT_WATCHES   0        1: also hold, per Node, the 7 watches its kubelet, kube-proxy and CNI
#                                  agent keep open (test/scale/cmd/agentwatch; KWOK holds one per kind for all)
#   SCALE_QUICK           0        1: 16 hosts, 20 s window, 10 s settle (~2-3 min in all)
#   SCALE_OUT             .cache/scale/<time>
#   E2E_APISERVER_PORT (16443), E2E_ETCD_PORT (22379), E2E_ETCD_PEER_PORT (22380),
#   E2E_KCM_PORT (20257), E2E_SCHEDULER_PORT (20259): moved off the e2e's defaults
#   so that a run here and an e2e can share the machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cluster=$repo/test/e2e/cluster
# pid_of, rss_kib, now_ms: the cluster scripts' own helpers.
# shellcheck source=../e2e/cluster/lib.sh
. "$cluster/lib.sh"
log() { echo "scale: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

quick=${SCALE_QUICK:-0}
if [ "$quick" = 1 ]; then
  hosts=${SCALE_HOSTS:-16} window=${SCALE_WINDOW:-20} settle=${SCALE_SETTLE:-10}
else
  hosts=${SCALE_HOSTS:-250} window=${SCALE_WINDOW:-60} settle=${SCALE_SETTLE:-30}
fi
read -r -a parts <<< "${SCALE_PARTITIONS:-1 2 4 8}"
max_nodes=${SCALE_MAX_NODES:-4000}
pods_per_node=${SCALE_PODS_PER_NODE:-3}
repart_to=${SCALE_REPARTITION_TO-4}
status_s=${SCALE_NODE_STATUS_S:-300}
budget=${SCALE_BUDGET:-1200}
timeout_s=${SCALE_TIMEOUT:-600}
agent_watches=${SCALE_AGENT_WATCHES:-0}
export E2E_APISERVER_PORT=${E2E_APISERVER_PORT:-16443}
export E2E_ETCD_PORT=${E2E_ETCD_PORT:-22379}
export E2E_ETCD_PEER_PORT=${E2E_ETCD_PEER_PORT:-22380}
export E2E_KCM_PORT=${E2E_KCM_PORT:-20257}
export E2E_SCHEDULER_PORT=${E2E_SCHEDULER_PORT:-20259}
# A /24 per Node (the controller-manager's node IPAM): 10.244.0.0/16 would
# run out at 256 Nodes and fill etcd with CIDRNotAvailable events.
export E2E_CLUSTER_CIDR=${E2E_CLUSTER_CIDR:-10.128.0.0/9}

isnum() { case $1 in '' | *[!0-9]*) return 1 ;; esac; }
for v in hosts window settle max_nodes pods_per_node status_s budget timeout_s; do
  isnum "${!v}" || die "$v=${!v}: want a whole number (see the header of $0)"
done
for p in "${parts[@]}"; do
  case $p in 1 | 2 | 4 | 8) ;; *) die "SCALE_PARTITIONS: $p: allowed are 1, 2, 4, 8 (partitions of a host's 8 NUMA nodes)" ;; esac
done
case $agent_watches in 0 | 1) ;; *) die "SCALE_AGENT_WATCHES=$agent_watches: allowed are 0 and 1" ;; esac
case $repart_to in '' | 1 | 2 | 4 | 8) ;; *) die "SCALE_REPARTITION_TO=$repart_to: allowed are 1, 2, 4, 8 or empty" ;; esac
[ "$hosts" -ge 1 ] && [ "$hosts" -le 9999 ] || die "SCALE_HOSTS=$hosts: allowed 1..9999 (host names have 4 digits)"
[ "$pods_per_node" -le 3 ] || die "SCALE_PODS_PER_NODE=$pods_per_node: at most 3 (kube-proxy, CNI agent, node_exporter)"
for t in curl jq openssl setsid awk flock; do command -v "$t" >/dev/null || die "missing $t"; done

realbin=$("$repo/test/realbin/build.sh" --cached) || die "the real control plane is not built: run test/realbin/build.sh (10-15 min) first"
tools=$("$here/build.sh") || die "test/scale/build.sh failed"
kubectl_bin=$realbin/kubectl

out=${SCALE_OUT:-$repo/.cache/scale/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
t_run=$SECONDS
hz=$(getconf CLK_TCK)

# --- cleanup: KWOK, agentwatch and the control plane this run started, by pid.
kwok_pid= watch_pid= state=
# stop_pid PID: SIGTERM, 5 s, SIGKILL; then reap it.
stop_pid() {
  [ -n "$1" ] || return 0
  if kill -0 "$1" 2>/dev/null; then
    kill -TERM "$1" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$1" 2>/dev/null || true
  fi
  wait "$1" 2>/dev/null || true
}
stop_kwok() { stop_pid "$kwok_pid"; kwok_pid=; }
stop_watches() { stop_pid "$watch_pid"; watch_pid=; }
on_exit() {
  local rc=$?
  stop_watches
  stop_kwok
  if [ -n "$state" ]; then "$cluster/down.sh" "$state" >/dev/null 2>&1 || log "down.sh $state failed"; fi
  [ "$rc" = 0 ] || log "failed (exit $rc); what was measured is in $out"
}
trap on_exit EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# left: seconds of the run's budget left.
left() { echo $((budget - (SECONDS - t_run))); }
# wait_for WHAT CHECK...: poll CHECK every 5 s, up to SCALE_TIMEOUT or what is
# left of the budget, whichever is shorter.
wait_for() {
  local what=$1 cap deadline
  shift
  cap=$timeout_s
  [ "$(left)" -lt "$cap" ] && cap=$(left)
  deadline=$((SECONDS + cap))
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || die "$what: not done after ${cap} s ($(left) s of SCALE_BUDGET=$budget left)"
    [ -z "$kwok_pid" ] || kill -0 "$kwok_pid" 2>/dev/null || die "$what: KWOK exited; see $state/logs/kwok.log"
    sleep 5
  done
}

kc() { "$kubectl_bin" --kubeconfig "$state/out/admin-host.conf" --request-timeout=60s "$@"; }
admin_curl() {
  curl -sS --max-time 30 --cacert "$state/pki/ca.crt" --cert "$state/pki/admin.crt" --key "$state/pki/admin.key" "$@"
}
scrape_apiserver() { admin_curl -f "https://127.0.0.1:$E2E_APISERVER_PORT/metrics" > "$1"; }
scrape_etcd() { curl -fsS --max-time 30 "http://127.0.0.1:$E2E_ETCD_PORT/metrics" > "$1"; }

# KWOK's configuration: its Stages as its module ships them, but the Node
# heartbeat (a status update carrying fresh condition timestamps) every
# SCALE_NODE_STATUS_S (kubelet: nodeStatusReportFrequency 5 min once the
# Lease carries liveness; KWOK's own default is 10 min), and more lease
# workers than its 4, so that 4,000 Leases renew on time.
kwok_config() {
  cat <<EOF
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  nodeLeaseParallelism: 16
  nodePlayStageParallelism: 8
  podPlayStageParallelism: 8
EOF
  local f
  for f in "$tools"/stages/*.yaml; do
    echo ---
    if [ "$(basename "$f")" = node-heartbeat-with-lease.yaml ]; then
      sed -e "s/durationMilliseconds: 600000/durationMilliseconds: $((status_s * 1000))/" \
        -e "s/jitterDurationMilliseconds: 610000/jitterDurationMilliseconds: $((status_s * 1000 + status_s * 100))/" "$f"
    else
      cat "$f"
    fi
  done
}
kwok_config > "$out/kwok.yaml"
grep -q "durationMilliseconds: $((status_s * 1000))$" "$out/kwok.yaml" ||
  die "$tools/stages/node-heartbeat-with-lease.yaml: its delay is no longer 600000 ms; update kwok_config in $0"

# --- the objects. A host has 8 NUMA nodes (2 sockets × NPS4 or SNC4), 256
# CPUs and 1 TiB; P partitions split it evenly, each named after its first
# NUMA node as numa-partition does (node0, node4, …), each Node
# <host>-<partition>. Capacity and allocatable as kubelet publishes them
# (allocatable: 1 CPU and 1100Mi reserved per partition, plan's defaults).
colors=(red blue green yellow orange purple cyan magenta)
host_name() { printf 'host-%04d' "$1"; }
# The image digests every Node reports (the three DaemonSets' and pause).
printf -v digests '%064d ' 1 2 3 4
read -r -a digest <<< "$digests"
# node_yaml HOST_INDEX P I: the I-th of P partitions of host HOST_INDEX.
node_yaml() {
  local h=$1 p=$2 i=$3 host part name cpu mem machine uuid boot doc
  printf -v host 'host-%04d' "$h"
  printf -v machine 'e%031x' $((h * 8 + i)) # not all digits: KWOK's template writes it unquoted
  printf -v uuid '%08x-0000-4000-8000-%012x' "$h" "$i"
  printf -v boot '%08x-0000-4000-8000-%012x' "$h" $((i + 100))
  part=node$((i * 8 / p))
  name=$host-$part
  cpu=$((256 / p))
  mem=$((1024 * 1024 / p)) # MiB
  # read, a builtin, not cat: no process per object (8,000 at 2,000 Nodes).
  IFS= read -r -d '' doc <<EOF || true
---
apiVersion: v1
kind: Node
metadata:
  name: $name
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
    volumes.kubernetes.io/controller-managed-attach-detach: "true"
  labels:
    beta.kubernetes.io/arch: amd64
    beta.kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    kubernetes.io/hostname: $name
    kubernetes.io/os: linux
    numa-partition.io/host: $host
    numa-partition.io/partition: $part
    numa-type: ${colors[i]}
status:
  capacity: {cpu: "$cpu", memory: ${mem}Mi, pods: "110", ephemeral-storage: 1Ti, hugepages-1Gi: "0", hugepages-2Mi: "0"}
  allocatable: {cpu: "$((cpu - 1))", memory: $((mem - 1100))Mi, pods: "110", ephemeral-storage: $((1024 * 1024 / p))Mi, hugepages-1Gi: "0", hugepages-2Mi: "0"}
  addresses:
  - {type: InternalIP, address: 172.$((16 + h / 256 % 16)).$((h % 256)).$((10 + i))}
  - {type: Hostname, address: $name}
  nodeInfo:
    architecture: amd64
    containerRuntimeVersion: containerd://2.2.9
    kernelVersion: 6.12.0-amd64
    kubeProxyVersion: v1.37.2
    kubeletVersion: v1.37.2
    operatingSystem: linux
    osImage: Debian GNU/Linux 13 (trixie)
    machineID: "$machine"
    systemUUID: "$uuid"
    bootID: "$boot"
  images:
  - {names: ["registry.k8s.io/kube-proxy@sha256:${digest[0]}", "registry.k8s.io/kube-proxy:v1.37.2"], sizeBytes: 30876012}
  - {names: ["ghcr.io/flannel-io/flannel@sha256:${digest[1]}", "ghcr.io/flannel-io/flannel:v0.28.10"], sizeBytes: 33521104}
  - {names: ["quay.io/prometheus/node-exporter@sha256:${digest[2]}", "quay.io/prometheus/node-exporter:v1.12.1"], sizeBytes: 12480300}
  - {names: ["registry.k8s.io/pause@sha256:${digest[3]}", "registry.k8s.io/pause:3.10"], sizeBytes: 320368}
EOF
  printf '%s' "$doc"
}
# pods_yaml NODE: its DaemonSet pods, bound to it, host network (all three
# are), tolerating everything, system-node-critical, with the requests
# their upstream manifests set.
ds_names=(kube-proxy kube-flannel node-exporter)
ds_images=(registry.k8s.io/kube-proxy:v1.37.2 ghcr.io/flannel-io/flannel:v0.28.10 quay.io/prometheus/node-exporter:v1.12.1)
ds_cpu=(100m 100m 100m)
ds_mem=(50Mi 50Mi 30Mi)
pods_yaml() {
  local node=$1 d doc
  for ((d = 0; d < pods_per_node; d++)); do
    IFS= read -r -d '' doc <<EOF || true
---
apiVersion: v1
kind: Pod
metadata:
  name: ${ds_names[d]}-$node
  namespace: kube-system
  labels: {app: ${ds_names[d]}, controller-revision-hash: 6d4b9c8f7, pod-template-generation: "1"}
spec:
  nodeName: $node
  hostNetwork: true
  priorityClassName: system-node-critical
  tolerations: [{operator: Exists}]
  containers:
  - name: ${ds_names[d]}
    image: ${ds_images[d]}
    resources: {requests: {cpu: ${ds_cpu[d]}, memory: ${ds_mem[d]}}}
EOF
    printf '%s' "$doc"
  done
}

# create_all DIR GLOB: kubectl create every file DIR/GLOB, 4 kubectls at a
# time (each sends one POST per object, in order).
create_all() {
  find "$1" -name "$2" -print0 | xargs -0 -n 1 -P 4 \
    "$kubectl_bin" --kubeconfig "$state/out/admin-host.conf" --request-timeout=120s create -o name -f > /dev/null
}
# write_objects DIR HOSTS P FIRST_HOST: Nodes and their pods of hosts
# FIRST_HOST.., in files of 50 hosts (one file per kubectl).
write_objects() {
  local dir=$1 nh=$2 p=$3 first=${4:-0} h i host
  mkdir -p "$dir"
  for ((h = first; h < first + nh; h++)); do
    printf -v host 'host-%04d' "$h"
    for ((i = 0; i < p; i++)); do
      node_yaml "$h" "$p" "$i" >> "$dir/nodes-$((h / 50)).yaml"
      pods_yaml "$host-node$((i * 8 / p))" >> "$dir/pods-$((h / 50)).yaml"
    done
  done
}
ready_nodes() { kc get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$' || true; }
running_pods() { kc get pods -n kube-system --field-selector=status.phase=Running -o name | grep -c . || true; }
leases() { kc get leases -n kube-node-lease -o name | grep -c . || true; }
all_ready() {
  local want=$1 n r l
  n=$(ready_nodes) r=$(running_pods) l=$(leases)
  [ "$n" -ge "$want" ] && [ "$r" -ge $((want * pods_per_node)) ] && [ "$l" -ge "$want" ] && return 0
  log "  $n/$want Nodes Ready, $r/$((want * pods_per_node)) pods Running, $l Leases"
  return 1
}

# cpu_ticks PID: utime + stime, in clock ticks (fields 14 and 15 of
# /proc/PID/stat, counted after the command name's closing parenthesis).
cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
comps=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
[ "$agent_watches" = 0 ] || comps+=(agentwatch)
pid_for() {
  case $1 in
    kwok) echo "$kwok_pid" ;;
    agentwatch) echo "$watch_pid" ;;
    *) pid_of "$state" "$1" ;;
  esac
}

start_cluster() {
  state=$1
  "$cluster/up.sh" "$realbin" "$state" 2> "$state.up.log" || { tail -n 30 "$state.up.log" >&2; die "up.sh failed (log $state.up.log)"; }
  # Node objects are created by the admin here (as a kubelet's first
  # registration would be, minus the TLS bootstrap that the re-partition
  # step measures on its own).
  setsid "$tools/kwok" --kubeconfig="$state/out/admin-host.conf" --config="$out/kwok.yaml" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --node-lease-duration-seconds=40 < /dev/null > "$state/logs/kwok.log" 2>&1 &
  kwok_pid=$!
  sleep 2
  kill -0 "$kwok_pid" 2>/dev/null || { tail -n 20 "$state/logs/kwok.log" >&2; die "KWOK exited at start"; }
}
stop_cluster() {
  stop_watches
  stop_kwok
  "$cluster/down.sh" "$state" > /dev/null 2>&1 || die "down.sh $state failed"
  rm -rf "$state/etcd" # hundreds of MB at the larger sizes; the DB size is recorded
  state=
}

# measure NAME: steady-state figures over the window, as "key<TAB>value"
# lines in $out/NAME.figures.
measure() {
  local name=$1 c pid t0 t1 m=$out/$1
  declare -A tick0
  for c in "${comps[@]}"; do
    pid=$(pid_for "$c") || die "$c is not running"
    tick0[$c]=$(cpu_ticks "$pid")
  done
  scrape_apiserver "$m.before.prom"
  t0=$(now_ms)
  sleep "$window"
  scrape_apiserver "$m.after.prom"
  t1=$(now_ms)
  scrape_etcd "$m.etcd.prom"
  "$tools/scalemetrics" -before "$m.before.prom" -after "$m.after.prom" -etcd "$m.etcd.prom" \
    -seconds "$(awk -v ms=$((t1 - t0)) 'BEGIN { printf "%.3f", ms / 1000 }')" > "$m.figures" ||
    die "scalemetrics failed on $m.*.prom"
  for c in "${comps[@]}"; do
    pid=$(pid_for "$c") || die "$c exited during the window"
    awk -v d=$(($(cpu_ticks "$pid") - tick0[$c])) -v hz="$hz" -v ms=$((t1 - t0)) -v c="$c" \
      'BEGIN { printf "cpu_%s\t%.4f\n", c, d / hz / (ms / 1000) }' >> "$m.figures"
    printf 'rss_mib_%s\t%d\n' "$c" $(($(rss_kib "$pid") / 1024)) >> "$m.figures"
  done
}
fig() { awk -F'\t' -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print "NA" }' "$out/$1.figures"; }

cols=(partitions hosts nodes pods setup_s cpu_kube-apiserver cpu_etcd cpu_kube-controller-manager cpu_kube-scheduler cpu_kwok
  rss_mib_kube-apiserver rss_mib_etcd rss_mib_kube-controller-manager rss_mib_kube-scheduler
  lease_writes_per_s node_writes_per_s mutating_per_s requests_per_s watches registered_watchers objects etcd_keys etcd_db_bytes
  p99_mutating_s worst_p99_s worst_p99_call)
printf '%s\n' "$(IFS=$'\t'; echo "${cols[*]}")" > "$out/results.tsv"
{
  echo "# test/scale/run.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit	$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "machine	$(nproc) CPUs, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo), $(uname -r)"
  echo "load_before	$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "hosts	$hosts"
  echo "window_s	$window"
  echo "agent_watches	$agent_watches"
} > "$out/meta.tsv"

log "output in $out; $hosts hosts × P in ${parts[*]}; window ${window} s; budget ${budget} s; load $(cut -d' ' -f1-3 /proc/loadavg)"
largest=0
for p in "${parts[@]}"; do
  n=$((hosts * p))
  if [ "$n" -gt "$max_nodes" ]; then log "P=$p: $n Nodes > SCALE_MAX_NODES=$max_nodes, skipped"; continue; fi
  if [ "$n" -gt "$largest" ]; then largest=$n; fi
done
[ "$largest" -gt 0 ] || die "no configuration within SCALE_MAX_NODES=$max_nodes"

for p in "${parts[@]}"; do
  n=$((hosts * p))
  [ "$n" -le "$max_nodes" ] || continue
  # A configuration needs roughly 60 s + 0.1 s a Node before its window.
  need=$((60 + n / 10 + settle + window))
  if [ "$(left)" -lt "$need" ]; then
    log "P=$p ($n Nodes): skipped, $(left) s of SCALE_BUDGET=$budget left, about $need s needed"
    continue
  fi
  name=p$p-n$n
  log "P=$p: $hosts hosts → $n Nodes, $((n * pods_per_node)) pods ($(left) s of the budget left)"
  mkdir -p "$out/$name"
  write_objects "$out/$name/objects" "$hosts" "$p"
  start_cluster "$out/$name/cluster"
  t_setup=$SECONDS
  create_all "$out/$name/objects" 'nodes-*.yaml' || die "creating the Nodes failed"
  # Pods are refused until their namespace's ServiceAccount exists (up.sh
  # waits for default's; the pods are in kube-system).
  sa_ready() { kc get serviceaccount -n kube-system default -o name > /dev/null 2>&1; }
  wait_for "ServiceAccount kube-system/default" sa_ready
  create_all "$out/$name/objects" 'pods-*.yaml' || die "creating the pods failed"
  log "  objects created in $((SECONDS - t_setup)) s"
  wait_for "P=$p: $n Nodes Ready with their pods Running and Leases" all_ready "$n"
  setup_s=$((SECONDS - t_setup))
  if [ "$agent_watches" = 1 ]; then
    kc get nodes -o name | sed 's|^node/||' > "$out/$name/nodes.txt"
    setsid "$tools/agentwatch" -server "https://127.0.0.1:$E2E_APISERVER_PORT" -cacert "$state/pki/ca.crt" \
      -cert "$state/pki/admin.crt" -key "$state/pki/admin.key" -nodes "$out/$name/nodes.txt" \
      < /dev/null > "$out/$name/agentwatch.tsv" 2> "$state/logs/agentwatch.log" &
    watch_pid=$!
    # 200 watches a second (agentwatch -rate): wait for them all.
    sleep $((n * 7 / 200 + 5))
    kill -0 "$watch_pid" 2>/dev/null || { cat "$state/logs/agentwatch.log" >&2; die "agentwatch exited"; }
  fi
  log "  all Ready in $setup_s s; settling ${settle} s, then measuring ${window} s"
  sleep "$settle"
  measure "$name"
  {
    printf '%s\t%s\t%s\t%s\t%s' "$p" "$hosts" "$n" "$((n * pods_per_node))" "$setup_s"
    for c in "${cols[@]:5}"; do printf '\t%s' "$(fig "$name" "$c")"; done
    echo
  } >> "$out/results.tsv"
  if [ "$agent_watches" = 1 ]; then
    stop_watches
    log "  agentwatch: $(tr '\t\n' '= ' < "$out/$name/agentwatch.tsv")"
  fi
  log "  apiserver $(fig "$name" cpu_kube-apiserver) cores, etcd $(fig "$name" cpu_etcd) cores, $(fig "$name" lease_writes_per_s) Lease writes/s, p99 mutating $(fig "$name" p99_mutating_s) s"

  if [ "$n" = "$largest" ] && [ -n "$repart_to" ]; then
    # --- re-partition host 0: P Nodes out, repart_to in, each by TLS
    # bootstrap: a CSR as the bootstrap token's user (what kubelet sends),
    # approved by the controller-manager's csrapproving (kubeadm's RBAC,
    # up.sh sets it) or by us after 10 s, signed by its csrsigning.
    host=$(host_name 0)
    rp=$out/$name/repartition
    mkdir -p "$rp"
    . "$state/out/cluster.env"
    bootstrap_kc() {
      "$kubectl_bin" --kubeconfig "$state/out/bootstrap-kubelet.conf" --server "https://127.0.0.1:$E2E_APISERVER_PORT" --request-timeout=60s "$@"
    }
    scrape_apiserver "$rp/before.prom"
    t0=$(now_ms)
    # Drained first (KWOK, the pods' kubelet, finishes their deletion only
    # while their Node is there), then the Nodes and their Leases.
    for ((i = 0; i < p; i++)); do
      kc delete pods -n kube-system --field-selector "spec.nodeName=$host-node$((i * 8 / p))" --wait=true > /dev/null
    done
    kc delete nodes -l "numa-partition.io/host=$host" --wait=true > /dev/null
    for ((i = 0; i < p; i++)); do
      kc delete lease -n kube-node-lease "$host-node$((i * 8 / p))" --ignore-not-found > /dev/null
    done
    t_deleted=$(now_ms)
    for ((i = 0; i < repart_to; i++)); do
      node=$host-node$((i * 8 / repart_to))
      openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$rp/$node.key" 2> /dev/null
      openssl req -new -key "$rp/$node.key" -subj "/O=system:nodes/CN=system:node:$node" -out "$rp/$node.csr" 2> /dev/null
      jq -n --arg name "csr-$node" --arg req "$(base64 -w0 < "$rp/$node.csr")" '{
        apiVersion: "certificates.k8s.io/v1", kind: "CertificateSigningRequest",
        metadata: {name: $name},
        spec: {request: $req, signerName: "kubernetes.io/kube-apiserver-client-kubelet",
               usages: ["digital signature", "client auth"]}}' > "$rp/$node.csr.json"
      bootstrap_kc create -f "$rp/$node.csr.json" > /dev/null
    done
    issued() {
      local i node
      for ((i = 0; i < repart_to; i++)); do
        node=$host-node$((i * 8 / repart_to))
        [ -n "$(kc get csr "csr-$node" -o jsonpath='{.status.certificate}')" ] || return 1
      done
    }
    t_auto=$(($(now_ms) + 10000))
    approved_by=csrapproving
    until issued; do
      if [ "$(now_ms)" -gt "$t_auto" ] && [ "$approved_by" = csrapproving ]; then
        approved_by=admin
        for ((i = 0; i < repart_to; i++)); do kc certificate approve "csr-$host-node$((i * 8 / repart_to))" > /dev/null; done
      fi
      [ "$(now_ms)" -lt $((t_auto + 60000)) ] || die "re-partition: CSRs not issued 70 s after they were sent"
      sleep 0.1
    done
    t_issued=$(now_ms)
    rm -rf "$rp/objects"
    mkdir -p "$rp/objects"
    for ((i = 0; i < repart_to; i++)); do
      node_yaml 0 "$repart_to" "$i" >> "$rp/objects/nodes.yaml"
      pods_yaml "$host-node$((i * 8 / repart_to))" >> "$rp/objects/pods.yaml"
    done
    kc create -f "$rp/objects/nodes.yaml" -o name > /dev/null
    kc create -f "$rp/objects/pods.yaml" -o name > /dev/null
    host_ready() {
      local i node
      for ((i = 0; i < repart_to; i++)); do
        node=$host-node$((i * 8 / repart_to))
        [ "$(kc get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ] || return 1
        kc get lease -n kube-node-lease "$node" > /dev/null 2>&1 || return 1
        [ "$(kc get pods -n kube-system --field-selector "spec.nodeName=$node,status.phase=Running" -o name | grep -c .)" -ge "$pods_per_node" ] || return 1
      done
    }
    deadline=$(($(now_ms) + 120000))
    until host_ready; do
      [ "$(now_ms)" -lt "$deadline" ] || die "re-partition: the $repart_to new Nodes not Ready with their pods in 120 s"
      sleep 0.2
    done
    t_ready=$(now_ms)
    scrape_apiserver "$rp/after.prom"
    "$tools/scalemetrics" -before "$rp/before.prom" -after "$rp/after.prom" \
      -seconds "$(awk -v ms=$((t_ready - t0)) 'BEGIN { printf "%.3f", ms / 1000 }')" > "$rp/figures"
    rf() { awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$rp/figures"; }
    dur=$(awk -v ms=$((t_ready - t0)) 'BEGIN { printf "%.3f", ms / 1000 }')
    # Only creates, deletes and CSR calls are the re-partition's own: every
    # other Node's Lease renewals and status updates run on meanwhile, and
    # the 5-min status updates make that background too uneven to subtract.
    {
      printf 'nodes\tfrom\tto\tdelete_s\tbootstrap_s\tready_s\ttotal_s\tapproved_by\tcsr_requests\tcreates\tdeletes\n'
      printf '%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%s\t%s\t%s\t%s\t%s\n' "$n" "$p" "$repart_to" \
        "$(awk -v a="$t0" -v b="$t_deleted" 'BEGIN { print (b - a) / 1000 }')" \
        "$(awk -v a="$t_deleted" -v b="$t_issued" 'BEGIN { print (b - a) / 1000 }')" \
        "$(awk -v a="$t_issued" -v b="$t_ready" 'BEGIN { print (b - a) / 1000 }')" \
        "$dur" "$approved_by" "$(rf csr_requests_total)" "$(rf creates_total)" "$(rf deletes_total)"
    } > "$out/repartition.tsv"
    log "  re-partition of $host ($p → $repart_to Nodes among $n): $dur s"
  fi
  stop_cluster
done

# --- the tables: results.md from results.tsv (and repartition.tsv).
{
  echo "Load before the run: $(awk -F'\t' '$1 == "load_before" { print $2 }' "$out/meta.tsv"); after: $(cut -d' ' -f1-3 /proc/loadavg). $(awk -F'\t' '$1 == "machine" { print $2 }' "$out/meta.tsv"). Window ${window} s."
  echo
  echo "| P | Nodes | pods | setup s | apiserver cores | etcd cores | KCM cores | sched cores | apiserver MiB | etcd MiB | Lease writes/s | mutating/s | watches | etcd keys | etcd DB MiB | p99 mutating s | worst p99 s (call) |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { printf "| %s | %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %s | %s | %.1f | %.1f | %s | %s | %.1f | %s | %s %s |\n",
      $c["partitions"], $c["nodes"], $c["pods"], $c["setup_s"], $c["cpu_kube-apiserver"], $c["cpu_etcd"],
      $c["cpu_kube-controller-manager"], $c["cpu_kube-scheduler"], $c["rss_mib_kube-apiserver"], $c["rss_mib_etcd"],
      $c["lease_writes_per_s"], $c["mutating_per_s"], $c["watches"], $c["etcd_keys"], $c["etcd_db_bytes"] / 1048576,
      $c["p99_mutating_s"], $c["worst_p99_s"], $c["worst_p99_call"] }' "$out/results.tsv"
  echo
  echo "Per Node (apiserver+etcd CPU in millicores, their RSS in MiB, requests/s):"
  echo
  echo "| P | Nodes | apiserver+etcd mcores/Node | apiserver+etcd MiB/Node | Lease writes/s/Node | mutating/s/Node | etcd keys/Node | etcd DB KiB/Node |"
  echo "|---|---|---|---|---|---|---|---|"
  awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { n = $c["nodes"]; printf "| %s | %s | %.3f | %.3f | %.3f | %.3f | %.2f | %.1f |\n", $c["partitions"], n,
      1000 * ($c["cpu_kube-apiserver"] + $c["cpu_etcd"]) / n, ($c["rss_mib_kube-apiserver"] + $c["rss_mib_etcd"]) / n,
      $c["lease_writes_per_s"] / n, $c["mutating_per_s"] / n, $c["etcd_keys"] / n, $c["etcd_db_bytes"] / 1024 / n }' "$out/results.tsv"
  if [ -s "$out/repartition.tsv" ]; then
    echo
    echo "Re-partition of one host (TLS bootstrap per new Node):"
    echo
    awk -F'\t' 'NR == 1 { h = "|"; s = "|"; for (i = 1; i <= NF; i++) { h = h " " $i " |"; s = s "---|" } print h; print s; next }
      { r = "|"; for (i = 1; i <= NF; i++) r = r " " $i " |"; print r }' "$out/repartition.tsv"
  fi
} > "$out/results.md"
echo "load_after	$(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/meta.tsv"
cat "$out/results.md"
log "done in $((SECONDS - t_run)) s; results in $out"
