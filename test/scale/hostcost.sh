#!/usr/bin/env bash
# hostcost.sh — the host's CPU price of a partition's daemons, measured
# natively (#41). The e2e measures them on its real parts but under TCG,
# tens of times slower than a host's CPU; this runs one partition's pair the
# same way on this machine's own cores: the real kubelet (v1.37.2, cgroupfs
# driver, the static CPU and Memory Managers and the Topology Manager as
# numa-partition renders them, docs/render.md) and containerd 2 (its own
# root, state and sockets, NRI on, as render's containerd-NAME.toml), joined
# by TLS bootstrap to the e2e's real control plane (test/e2e/cluster/up.sh),
# with pods on a CNI bridge (Debian's containernetworking-plugins, as the
# e2e's VM image has).
#
# It measures, as a partition's Node lives:
#   idle-0      the Node Ready with no pod, over HOSTCOST_WINDOW seconds
#   start-N     N pods created at once until all run (+10 s), and their cost
#   idle-N      N pods running, over HOSTCOST_WINDOW seconds
#   stop-N      the N pods deleted until kubelet has removed them all
# the CPU seconds of kubelet, and of containerd with everything it starts
# (its shims, runc, the CNI plugins), each from a cpuacct cgroup of its own,
# so that processes which exit (runc, CNI, a deleted pod's shim) are counted;
# and their resident memory at the end of each phase. Pods' own CPU is not
# in these figures: their cgroups are kubelet's, under /np-hostcost.
#
# What it changes of this host it puts back: the CNI bridge plugin turns on
# IPv4 forwarding (restored on exit); kubelet is told not to install its
# iptables chains (makeIPTablesUtilChains: false); the two directories
# kubelet and containerd's CNI library always use (/var/lib/kubelet for
# device plugins' sockets, /var/lib/cni for results) are removed when
# this run made them.
#
# Results: HOSTCOST_OUT (default .cache/hostcost/<time>/) results.tsv,
# results.md (printed at the end), the daemons' logs. Takes ~8 minutes with
# the defaults. Needs root, cgroup v1 or hybrid (a cpuacct hierarchy), runc,
# /usr/lib/cni (containernetworking-plugins), swap off or allowed. It refuses
# to start when its cgroups, run dir or the kubelet's ports are in use, and
# on exit stops what it started: pods, kubelet, containerd, the shims and
# their containers, the mounts below its directories, the control plane.
#
# Environment (defaults):
#   HOSTCOST_PODS      10     pods started at once (one container each)
#   HOSTCOST_WINDOW    120    seconds of each idle measurement
#   HOSTCOST_SETTLE    30     seconds waited before each idle measurement
#   HOSTCOST_TIMEOUT   300    cap of each wait, seconds
#   HOSTCOST_OUT       .cache/hostcost/<time>
#   E2E_APISERVER_PORT (17443), E2E_ETCD_PORT (23379), E2E_ETCD_PEER_PORT (23380),
#   E2E_KCM_PORT (21257), E2E_SCHEDULER_PORT (21259): off the e2e's and
#   test/scale/run.sh's ports, so that runs can share the machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cluster=$repo/test/e2e/cluster
# now_ms, rss_kib: the cluster scripts' own helpers.
# shellcheck source=../e2e/cluster/lib.sh
. "$cluster/lib.sh"
log() { echo "hostcost: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

pods=${HOSTCOST_PODS:-10}
window=${HOSTCOST_WINDOW:-120}
settle=${HOSTCOST_SETTLE:-30}
timeout_s=${HOSTCOST_TIMEOUT:-300}
out=${HOSTCOST_OUT:-$repo/.cache/hostcost/$(date +%Y%m%d-%H%M%S)}
export E2E_APISERVER_PORT=${E2E_APISERVER_PORT:-17443}
export E2E_ETCD_PORT=${E2E_ETCD_PORT:-23379}
export E2E_ETCD_PEER_PORT=${E2E_ETCD_PEER_PORT:-23380}
export E2E_KCM_PORT=${E2E_KCM_PORT:-21257}
export E2E_SCHEDULER_PORT=${E2E_SCHEDULER_PORT:-21259}
node=hostcost
run=/run/np-hostcost # sockets: short paths
cg=np-hostcost       # kubelet's cgroupRoot, in every v1 hierarchy
acct=/sys/fs/cgroup/cpuacct/np-hostcost-daemons
kubelet_port=20250 healthz_port=20248

for p in "$kubelet_port" "$healthz_port"; do
  ! ss -Hltn "sport = :$p" | grep -q . || die "port $p is taken"
done
[ -d /sys/fs/cgroup/cpuacct ] || die "no cgroup v1 cpuacct hierarchy at /sys/fs/cgroup/cpuacct"
[ -x /usr/lib/cni/bridge ] || die "no /usr/lib/cni/bridge: apt-get install containernetworking-plugins"
command -v runc >/dev/null || die "no runc: apt-get install runc"
[ ! -e "$run" ] && [ ! -e "$acct" ] && [ ! -e /sys/fs/cgroup/cpu/$cg ] ||
  die "$run, $acct or /sys/fs/cgroup/*/$cg exists: another run, or a killed one (remove them)"
if [ -n "$(swapon --noheadings 2>/dev/null)" ]; then swap=false; else swap=true; fi
# Without CAP_SYS_RESOURCE (some VM sandboxes take it from root) no process
# may lower its OOM score, and runc fails every pod sandbox (kubelet gives
# pause -998): containerd then keeps containers at its own score, as a
# rootless containerd does.
restrict_oom=false
if ! (echo -1 >/proc/self/oom_score_adj) 2>/dev/null; then restrict_oom=true; fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
log "results in $out"
bin=$("$repo/test/realbin/build.sh")
"$repo/test/images/build.sh" "$out/images"
CGO_ENABLED=0 go -C "$repo" build -trimpath -o "$out/numa-partition" ./cmd/numa-partition
forwarding=$(cat /proc/sys/net/ipv4/ip_forward)
made_dirs=""
for d in /var/lib/kubelet /var/lib/cni; do [ -e "$d" ] || made_dirs="$made_dirs $d"; done

# --- teardown, whatever state a failure leaves.
v1_hierarchies() { awk '$3=="cgroup" && $2 ~ "^/sys/fs/cgroup/" {print $2}' /proc/self/mounts; }
kill_cgroup_tree() { # DIR: every process below it
  local f
  for f in $(find "$1" -name cgroup.procs 2>/dev/null); do
    xargs -r kill -9 <"$f" 2>/dev/null || true
  done
}
cleanup() {
  local rc=$?
  set +e
  [ -n "${kubelet_pid:-}" ] && kill "$kubelet_pid" 2>/dev/null && wait "$kubelet_pid" 2>/dev/null
  [ -n "${allocator_pid:-}" ] && kill "$allocator_pid" 2>/dev/null && wait "$allocator_pid" 2>/dev/null
  # The containers, then containerd and its shims (all in its cpuacct group).
  kill_cgroup_tree /sys/fs/cgroup/cpuacct/$cg
  [ -n "${containerd_pid:-}" ] && kill "$containerd_pid" 2>/dev/null && wait "$containerd_pid" 2>/dev/null
  kill_cgroup_tree "$acct"
  sleep 1
  grep -oE " ($run|$out)/[^ ]*" /proc/self/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null
  # Depth first, a few times: a killed process leaves its group a moment later.
  local d i
  for d in $(v1_hierarchies | sed "s#\$#/$cg#") /sys/fs/cgroup/unified/$cg "$acct"; do
    for i in 1 2 3 4 5 6 7 8 9 10; do
      [ -d "$d" ] || break
      find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
      sleep 0.3
    done
    [ ! -d "$d" ] || log "could not remove $d"
  done
  ip link del cni-hostcost 2>/dev/null
  rm -rf "$run"
  [ -z "${forwarding:-}" ] || echo "$forwarding" >/proc/sys/net/ipv4/ip_forward
  # shellcheck disable=SC2086 # a list of paths without spaces
  [ -z "${made_dirs:-}" ] || rm -rf $made_dirs
  "$cluster/down.sh" "$out/cluster" >/dev/null 2>&1
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$cluster/up.sh" "$bin" "$out/cluster"
admin=$out/cluster/out/admin-host.conf
# The native kubelet reaches the API server where the host does (the
# serving certificate names 127.0.0.1), with the guests' bootstrap token.
sed "s#server: .*#server: https://127.0.0.1:$E2E_APISERVER_PORT#" \
  "$out/cluster/out/bootstrap-kubelet.conf" >"$out/bootstrap-kubelet.conf"
kc() { "$bin/kubectl" --kubeconfig "$admin" "$@"; }
wait_for() { # WHAT CMD...: until CMD succeeds
  local what=$1 deadline=$((SECONDS + timeout_s))
  shift
  until "$@"; do
    [ $SECONDS -lt $deadline ] || die "$what: not within ${timeout_s}s"
    sleep 1
  done
}

# --- cgroups: kubelet's root in every hierarchy (cpuset given all CPUs, as
# a slice's is given its partition's), and one cpuacct group per daemon.
for h in $(v1_hierarchies); do
  mkdir "$h/$cg"
  if [ -e "$h/cpuset.cpus" ]; then
    cat "$h/cpuset.cpus" >"$h/$cg/cpuset.cpus"
    cat "$h/cpuset.mems" >"$h/$cg/cpuset.mems"
    echo 1 >"$h/$cg/cgroup.clone_children" # kubelet's and runc's groups inherit them
  fi
done
mkdir -p "$acct/kubelet" "$acct/containerd" "$acct/allocator"
mkdir -p "$run" "$out/containerd" "$out/kubelet" "$out/cni/net.d" "$out/pods-log"

# --- containerd, configured as render's containerd-NAME.toml (own root,
# state, sockets and NRI socket), with runc under cgroupfs.
cat >"$out/containerd.toml" <<EOF
version = 3
root = "$out/containerd"
state = "$run/containerd"
[grpc]
  address = "$run/containerd.sock"
[ttrpc]
  address = "$run/containerd.sock.ttrpc"
[debug]
  address = "$run/debug.sock"
[plugins."io.containerd.nri.v1.nri"]
  disable = false
  socket_path = "$run/containerd/nri.sock"
[plugins."io.containerd.cri.v1.images"]
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "e2e.local/pause:1"
[plugins."io.containerd.cri.v1.runtime"]
  disable_hugetlb_controller = false
  restrict_oom_score_adj = $restrict_oom
[plugins."io.containerd.cri.v1.runtime".cni]
  bin_dirs = ["/usr/lib/cni"]
  conf_dir = "$out/cni/net.d"
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
  SystemdCgroup = false
  Root = "$run/runc"
EOF
cat >"$out/cni/net.d/10-hostcost.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "hostcost", "plugins": [
  {"type": "bridge", "bridge": "cni-hostcost", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.250.0.0/24"}]],
            "dataDir": "$run/cni-ipam"}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
# start_in GROUP LOG CMD...: CMD in GROUP's cpuacct cgroup, backgrounded.
start_in() {
  local group=$1 logf=$2
  shift 2
  sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$acct/$group" "$@" >"$logf" 2>&1 &
}
start_in containerd "$out/containerd.log" "$bin/containerd" --config "$out/containerd.toml"
containerd_pid=$!
ctr() { "$bin/ctr" --address "$run/containerd.sock" --namespace k8s.io "$@"; }
deadline=$((SECONDS + timeout_s))
until ctr version >/dev/null 2>&1; do
  [ $SECONDS -lt $deadline ] || die "containerd did not answer in ${timeout_s}s: $(tail -5 "$out/containerd.log")"
  kill -0 "$containerd_pid" 2>/dev/null || die "containerd exited: $(tail -5 "$out/containerd.log")"
  sleep 0.5
done
for img in pause workload; do ctr images import --no-unpack=false "$out/images/$img.tar" >/dev/null; done
log "containerd up, images imported"

# --- the partition's allocator, from this machine's plan (one partition,
# its containerd's state dir this run's: the plan names the NRI socket
# there). The Node condition it writes every minute is left out: it needs
# the kubelet's credentials at their rendered path.
printf '[runtime]\nstate_dir = "%s"\n' "$run/containerd" >"$out/config.toml"
"$out/numa-partition" -c "$out/config.toml" plan -o json >"$out/plan.json"
partition=$(jq -r '.partitions[0].name' "$out/plan.json")
start_in allocator "$out/allocator.log" "$out/numa-partition" allocator serve --partition "$partition" \
  --plan "$out/plan.json" --socket "$run/allocator.sock" --state-dir "$out/allocator" --no-node-condition \
  --metrics-addr 127.0.0.1:0
allocator_pid=$!
wait_for "the allocator plugged into containerd (NRI)" grep -q "Synchroniz\|synchroniz" "$out/allocator.log"

# --- kubelet, configured as kubeletgen renders a partition's (cgroupfs here:
# this host's PID 1 is not systemd).
cat >"$out/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $out/cluster/out/ca.crt}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
cgroupRoot: /$cg
cgroupsPerQOS: true
containerRuntimeEndpoint: unix://$run/containerd.sock
cpuManagerPolicy: static
cpuManagerPolicyOptions: {strict-cpu-reservation: "true"}
enforceNodeAllocatable: [pods]
evictionHard: {memory.available: 100Mi, nodefs.available: 10%}
failCgroupV1: false
failSwapOn: $swap
healthzBindAddress: 127.0.0.1
healthzPort: $healthz_port
makeIPTablesUtilChains: false
port: $kubelet_port
kubeReserved: {memory: 500Mi}
maxPods: 110
memoryManagerPolicy: Static
reservedMemory: [{numaNode: 0, limits: {memory: 1100Mi}}]
reservedSystemCPUs: "0"
systemReserved: {memory: 500Mi}
topologyManagerPolicy: best-effort
topologyManagerScope: container
podLogsDir: $out/pods-log
resolvConf: /etc/resolv.conf
rotateCertificates: true
EOF
start_in kubelet "$out/kubelet.log" "$bin/kubelet" \
  --config "$out/kubelet.yaml" --root-dir "$out/kubelet" --cert-dir "$out/kubelet/pki" \
  --bootstrap-kubeconfig "$out/bootstrap-kubelet.conf" \
  --kubeconfig "$out/kubelet.conf" --hostname-override "$node"
kubelet_pid=$!
deadline=$((SECONDS + timeout_s))
until [ "$(kc get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; do
  [ $SECONDS -lt $deadline ] || die "Node $node not Ready in ${timeout_s}s: $(tail -5 "$out/kubelet.log")"
  kill -0 "$kubelet_pid" 2>/dev/null || die "kubelet exited: $(tail -5 "$out/kubelet.log")"
  sleep 1
done
log "Node $node Ready"

# --- measuring: per phase, each daemon's CPU seconds (its cpuacct group)
# and resident memory, one row per daemon and phase.
daemons="kubelet containerd allocator"
cpu_ns() { cat "$acct/$1/cpuacct.usage"; }
rss_mib() { # GROUP: the resident memory of its processes, MiB
  local p sum=0
  for p in $(cat "$acct/$1/cgroup.procs"); do sum=$((sum + $(rss_kib "$p" || echo 0))); done
  echo $((sum / 1024))
}
busy() { awk '/^cpu / {print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }
printf 'phase\tdaemon\tseconds\tcpu_s\tmillicores\trss_mib\tpods\tmachine_busy_pct\n' >"$out/results.tsv"
declare -A cpu0
phase_start() {
  local d
  t0=$(now_ms) b0=$(busy)
  for d in $daemons; do cpu0[$d]=$(cpu_ns "$d"); done
}
phase_end() { # NAME PODS
  local d t1 b1
  t1=$(now_ms) b1=$(busy)
  for d in $daemons; do
    awk -v n="$1" -v d="$d" -v t0="$t0" -v t1="$t1" -v c0="${cpu0[$d]}" -v c1="$(cpu_ns "$d")" \
      -v r="$(rss_mib "$d")" -v p="$2" -v b0="$b0" -v b1="$b1" 'BEGIN {
        s = (t1 - t0) / 1000; c = (c1 - c0) / 1e9; split(b0, x, " "); split(b1, y, " ")
        printf "%s\t%s\t%.1f\t%.2f\t%.1f\t%d\t%d\t%.0f\n", n, d, s, c, 1000 * c / s, r, p,
          100 * (y[1] - x[1]) / (y[2] - x[2]) }' >>"$out/results.tsv"
  done
  log "$(grep -P "^$1\t" "$out/results.tsv" | cut -f2,4,5,6 | tr '\t\n' ' ;')"
}
running() { kc get pods -n default -l app=hostcost --field-selector status.phase=Running -o name 2>/dev/null | wc -l; }
all_pods() { kc get pods -n default -l app=hostcost -o name 2>/dev/null | wc -l; }

sleep "$settle"
phase_start
sleep "$window"
phase_end idle-0 0

pod_yaml() { # I
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: hostcost-$1, namespace: default, labels: {app: hostcost}}
spec:
  nodeName: $node
  terminationGracePeriodSeconds: 1
  containers:
  - name: workload
    image: e2e.local/workload:1
    imagePullPolicy: Never
    resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {memory: 64Mi}}
---
EOF
}
all_running() { [ "$(running)" -eq "$pods" ]; }
none_left() { [ "$(all_pods)" -eq 0 ] && [ -z "$(ctr tasks list -q 2>/dev/null)" ]; }
phase_start
for i in $(seq 1 "$pods"); do pod_yaml "$i"; done | kc apply -f - >/dev/null
wait_for "$pods pods Running" all_running
log "$pods pods Running after $(( ($(now_ms) - t0) / 1000 )) s"
sleep 10
phase_end "start-$pods" "$pods"

sleep "$settle"
phase_start
sleep "$window"
phase_end "idle-$pods" "$pods"

phase_start
kc delete pods -n default -l app=hostcost --wait=false >/dev/null
wait_for "the pods gone" none_left
phase_end "stop-$pods" 0

{
  echo "| phase | seconds | pods | kubelet | containerd, shims, runc, CNI | allocator | machine busy |"
  echo "|---|---|---|---|---|---|---|"
  awk -F'\t' 'NR > 1 {
      k = $1; if (!(k in secs)) order[++n] = k
      secs[k] = $3; pods[k] = $7; busy[k] = $8
      cell[k, $2] = sprintf("%.1f m (%.2f s), %d MiB", $5, $4, $6) }
    END { for (i = 1; i <= n; i++) { k = order[i]
      printf "| %s | %s | %s | %s | %s | %s | %s %% |\n", k, secs[k], pods[k],
        cell[k, "kubelet"], cell[k, "containerd"], cell[k, "allocator"], busy[k] } }' "$out/results.tsv"
  echo
  echo "Each cell: the daemon's CPU in millicores over the phase (its CPU seconds), its resident memory at the end."
  echo "kubelet $("$bin/kubelet" --version 2>&1 | awk '{print $2}'), containerd $("$bin/containerd" --version | awk '{print $3}'), $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), load at the end $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
} >"$out/results.md"
cat "$out/results.md"
