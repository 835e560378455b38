# lib.sh — helpers for the guest's scenario steps (sourced, bash).
# A step is a script that exits 0 when everything it asserts holds; it
# explains every failure on a line starting with "FAIL:".
set -uo pipefail
export PATH=/e2e/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
. /e2e/env
STATE=/run/e2e           # shared between steps of one boot
REBOOT_KEEP=/var/lib/e2e-reboot  # steps reboot and rebooted: on boot v2's disk, across the reboot
mkdir -p "$STATE"
FAILED=0

fail() { echo "FAIL: $*" >&2; FAILED=1; }
die() { echo "FAIL: $*" >&2; exit 1; }
# ok WHAT: a check that held, with the step's seconds so far (where a
# step spends its time, read from its log).
ok() { echo "  ok: $* [${SECONDS}s]"; }
# finish ends a step: non-zero when any fail was recorded.
finish() { exit "$FAILED"; }
# expect_has WHAT GOT PART: GOT contains PART.
expect_has() {
  if [[ $2 == *"$3"* ]]; then ok "$1"; else fail "$1: got '$2', want it to hold '$3'"; fi
}
# probe POD OP ARG...: the operations (get ADDR, resolve NAME) run in POD
# of this boot's namespace by `workload each`, through one kubectl exec
# (6-35 s of the VM's emulated CPU each: one exec for a pod's checks, not
# one per check); its lines go to PROBE. Fails when the exec or any
# operation did.
probe() { local pod=$1; shift; PROBE=$(k -n $NS exec "$pod" -- /workload each "$@" 2>&1); }
# probe_answer OP ARG: that operation's answer in PROBE ("error: ..." when
# it failed).
probe_answer() { awk -v p="$1 $2: " 'index($0, p) == 1 {print substr($0, length(p) + 1); exit}' <<<"$PROBE"; }
# has [GREP-OPTIONS] PATTERN: stdin matches, read to its end first: with
# pipefail, "journalctl | grep -q" fails when grep exits on the first match
# before the producer's last write (SIGPIPE).
has() { local in; in=$(cat); grep -q "$@" <<<"$in"; }

# expect_eq WHAT GOT WANT
expect_eq() {
  if [ "$2" = "$3" ]; then ok "$1 = $3"; else fail "$1 is '$2', want '$3'"; fi
}

# requires STEP: stop early when a step this one builds on failed.
requires() {
  [ -e "$STATE/passed-$1" ] || die "needs step '$1', which did not pass in this boot"
}

# status_field PID FIELD, e.g. Cpus_allowed_list
status_field() { awk -v f="$2:" '$1==f{print $2}' "/proc/$1/status"; }

# cgroup_of PID: the process's cgroup path (v2: unified; v1: name=systemd).
cgroup_of() {
  if [ "$E2E_CGROUP" = v2 ]; then sed -n 's/^0:://p' "/proc/$1/cgroup"
  else sed -n 's/^[0-9]*:name=systemd://p' "/proc/$1/cgroup"; fi
}

# run CMD...: show the command and its output; return its status.
run() {
  echo "  \$ $*"
  "$@"
}

# How long a pod may take from creation to Running: under TCG, on a busy
# CPU 0 (the host's and partition node0's daemons, and these steps), a
# sandbox and its container took 3.6 minutes (run 5 of 2026-12-02:
# backend-node0 in step services, scheduled to Started).
POD_START_S=480

# wait_until SECONDS DESCRIPTION CMD...: poll CMD until it succeeds, at
# most SECONDS. Between two tries it pauses half a second, or as long as
# the last try took when that was longer: under TCG a kubectl call costs
# 1-3 s of the VM's one emulated core, and a check run back to back would
# take half that core from the kubelet and containerd it waits for.
wait_until() {
  local limit=$1 what=$2; shift 2
  local end=$((SECONDS + limit)) t0 took
  while :; do
    t0=${EPOCHREALTIME/./}
    "$@" >/dev/null 2>&1 && break
    if [ $SECONDS -ge $end ]; then fail "timed out after ${limit}s waiting for $what"; return 1; fi
    took=$(( ${EPOCHREALTIME/./} - t0 ))   # microseconds
    [ $took -gt 500000 ] || took=500000
    [ $took -lt 5000000 ] || took=5000000
    sleep "$((took / 1000000)).$(printf '%06d' $((took % 1000000)))"
  done
  ok "$what"
}

# http_get PORT PATH: body of a plain HTTP GET on 127.0.0.1 (no curl here);
# status 1 when the answer is not 200, 2 when there is none: no
# connection, or no whole answer within 30 s (a wait_until cannot cut a
# check short).
http_get() {
  local body rc
  { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 2
  printf 'GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "$2" >&3
  IFS= read -r -d '' -t 30 body <&3; rc=$?
  exec 3<&-
  [ $rc -le 128 ] || return 2
  case "$body" in "HTTP/1."?" 200"*) printf '%s\n' "${body##*$'\r\n\r\n'}" ;; *) return 1 ;; esac
}

# unit_prop UNIT PROPERTY
unit_prop() { systemctl show -p "$2" --value "$1"; }

# --- the partitioned host the apply steps expect. Boots v2 and v1: 2
# sockets of one NUMA node (config/partitions.toml); boot n4 (cgroup v2):
# 2 sockets of two NUMA nodes with one CPU each (config/partitions-n4.toml).
E2E_CGROUP=v2
[ "$E2E_MODE" = v1 ] && E2E_CGROUP=v1
HOST_CPUS=0
if [ "$E2E_MODE" = n4 ]; then
  CONFIG_SRC=/e2e/guest/config/partitions-n4.toml
  PARTITIONS="node0 node2"
  declare -A POD_CPUS=([node0]=1 [node2]=2-3)
  declare -A DAEMON_CPUS=([node0]=0 [node2]=2-3)
  declare -A SLICE_CPUS=([node0]=0-1 [node2]=2-3)
  declare -A MEMS=([node0]=0-1 [node2]=2-3)
  declare -A HEALTHZ=([node0]=10248 [node2]=10258)
  declare -A HUGEPAGES_2M=()
  HOST_MEMS=0-3
else
  CONFIG_SRC=/e2e/guest/config/partitions.toml
  PARTITIONS="node0 node1"
  declare -A POD_CPUS=([node0]=1 [node1]=2-3)      # partition CPUs minus host-reserved CPU 0
  declare -A DAEMON_CPUS=([node0]=0 [node1]=2-3)   # host-reserved CPUs on its nodes, else its own
  declare -A SLICE_CPUS=([node0]=0-1 [node1]=2-3)
  declare -A MEMS=([node0]=0 [node1]=1)
  declare -A HUGEPAGES_2M=([node0]=16 [node1]=24)
  # The host's memory is not locked (templates/host.dropin.tmpl says why):
  # system.slice may allocate on every node, so apply can fill node 1's pools.
  HOST_MEMS=0-1
fi
CONFIG=/etc/numa-partition/config.toml
# Boots v2 and v1 run the default network mode: each partition in a
# network namespace of its own (np-<partition>), every kubelet on the
# standard ports in its namespace. Boot v2's uplink is the default bridge
# npbr0 (10.212.0.0/24, not masqueraded: the lab routes the subnet to the VM),
# boot v1's a macvlan per partition on the VM's eth0 with an address of
# the lab's own network, as a host on a LAN gives each partition one.
# Boot n4 keeps the explicit host mode (one namespace, strided ports).
NET_MODE=host
if [ "$E2E_MODE" != n4 ]; then
  NET_MODE=namespace
  declare -A HEALTHZ=([node0]=10248 [node1]=10248)
fi
if [ "$E2E_MODE" = v2 ]; then
  UPLINK=bridge GATEWAY=10.212.0.1
  declare -A ADDRESS=([node0]=10.212.0.2 [node1]=10.212.0.3)
elif [ "$E2E_MODE" = v1 ]; then
  UPLINK=macvlan GATEWAY=10.0.2.2
  declare -A ADDRESS=([node0]=10.0.2.40 [node1]=10.0.2.41)
fi
# config_src: the boot's config (host mode said explicitly where it runs).
# In namespace mode the pod network is flannel's, which writes its CNI
# config into each partition's own /etc/cni/net.d (a node dir: the
# default cni_conf_dir), and pods resolve names through CoreDNS (boot
# v2's: boot v1's pods reach it across hosts).
config_src() {
  if [ "$NET_MODE" = host ]; then
    printf '[network]\nmode = "host"\n\n'
    cat "$CONFIG_SRC"
    return
  fi
  if [ "$UPLINK" = macvlan ]; then
    printf '[network]\nuplink = "macvlan"\nparent = "eth0"\nsubnet = "10.0.2.0/24"\ngateway = "%s"\npool = "10.0.2.40/29"\n\n' $GATEWAY
  else
    # Routed, not masqueraded: the lab routes the subnet to this VM, as
    # a cluster of several hosts must (flannel's vxlan goes to each Node's
    # own address). Masqueraded, boot v1 got this boot's vxlan packets
    # with a bad outer UDP checksum (kernel 6.1) and dropped every one.
    printf '[network]\nnat = false\n\n'
  fi
  # cgroup v1 (boot v1): node1 in kubelet mode, nri mode needing v2 (step
  # apply checks that apply refuses it there).
  local v1=
  [ "$E2E_CGROUP" = v1 ] && v1='/^allocator_mode = "nri"$/d'
  sed -e '/^cni_conf_dir = /d' -e "s|^\[kubelet\]\$|[kubelet]\ncluster_dns = [\"$DNS_IP\"]|" ${v1:+-e "$v1"} "$CONFIG_SRC"
}
# CoreDNS's Service address (run.sh renders the manifests with it).
DNS_IP=10.96.0.10
# dns_ready: CoreDNS's Deployment (boot v2's step services) has both
# replicas ready.
dns_ready() { [ "$(api /apis/apps/v1/namespaces/kube-system/deployments/coredns .status.readyReplicas)" = 2 ]; }
# in_netns P CMD...: CMD in partition P's network namespace (namespace
# mode), else on the host.
in_netns() {
  local p=$1; shift
  if [ "$NET_MODE" = namespace ]; then nsenter --net=/run/netns/np-$p -- "$@"; else "$@"; fi
}
# kubelet_healthz P: its kubelet's /healthz, where it listens.
kubelet_healthz() {
  in_netns "$1" bash -c "$(declare -f http_get); http_get ${HEALTHZ[$1]} /healthz"
}
declare -A COLOR=([node0]=red [node1]=blue [node2]=blue)
declare -A POD_CPU_COUNT=([node0]=1 [node1]=2 [node2]=2)   # = each Node's allocatable cpu
# Who places each partition's containers (allocator.mode).
# nri mode needs cgroup v2 (the v1 boot checks that apply refuses it).
declare -A ALLOC_MODE=([node0]=kubelet [node1]=$([ "$E2E_CGROUP" = v2 ] && echo nri || echo kubelet) [node2]=nri)
# Every kubelet's root dir is on one shared filesystem (boot v2's disk,
# else a tmpfs: step cluster), which the plan splits by CPUs
# (kubelet.root_dir).
KUBELETS_FS=/var/lib/kubelets
kubelet_root() { echo $KUBELETS_FS/$1; }

# --- the cluster (test/e2e/cluster on the host, reached over QEMU's
# guestfwd): kubectl as the cluster admin, in this boot's namespace.
export KUBECONFIG=/e2e/cluster/admin.conf
NS=e2e-$E2E_MODE
BOOT=$(cat /etc/hostname)
node_name() { echo "$BOOT-$1"; }
# apply without client-side validation: it fetches and parses the API's
# OpenAPI schema in every kubectl process (half of an apply's CPU natively,
# 0.37 against 0.19 s; tens of seconds under TCG), and our manifests are
# the server's to judge.
# Each call's wall time goes to share/kubectl.tsv (step, verb, seconds).
k() {
  local t0=$EPOCHREALTIME rc=0
  if [ "${1:-}" = apply ]; then kubectl_call --request-timeout=20s apply --validate=false "${@:2}" || rc=$?
  else kubectl_call --request-timeout=20s "$@" || rc=$?; fi
  printf '%s\t%s\t%s\n' "${0##*/}" "${1:-}" "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.2f", b - a}')" >> /mnt/share/kubectl.tsv 2>/dev/null
  return $rc
}

# kubectl_call ARG...: kubectl with the cluster admin's credentials, run
# on the host by run.sh's kubectl bridge (test/e2e/kubectl-bridge.sh says
# why and how) when the share has one, else here. A file named after -f
# goes with the call, and stdin for `-f -`; its output, errors and exit
# status come back.
KUBECTL_BRIDGE=/mnt/share/kubectl
kubectl_call() {
  [ -d $KUBECTL_BRIDGE ] || { kubectl "$@"; return; }
  local id=$KUBECTL_BRIDGE/$BASHPID-${EPOCHREALTIME/./} a prev= n=0 args=() rc i=0 end
  local pauses=(0.05 0.05 0.1 0.1 0.2 0.2 0.5)
  mkdir "$id.tmp" || return 1
  for a in "$@"; do
    if [ "$prev" = -f ] || [ "$prev" = --filename ]; then
      if [ "$a" = - ]; then cat > "$id.tmp/stdin" || return 1
      elif [[ $a == /* ]] && [ -f "$a" ]; then cp "$a" "$id.tmp/file-$n" || return 1; a=@REQ@/file-$n; n=$((n + 1)); fi
    fi
    args+=("$a"); prev=$a
  done
  printf '%s\0' "${args[@]}" > "$id.tmp/args" && mv "$id.tmp" "$id.req" || return 1
  # Waits without a process per try (sleep's fork and exec cost
  # milliseconds of the emulated core): read times out on a FIFO nobody
  # writes to.
  if [ -z "${POLL_FD:-}" ]; then
    mkfifo -m 600 "$STATE/poll-$BASHPID" && exec {POLL_FD}<>"$STATE/poll-$BASHPID" && rm -f "$STATE/poll-$BASHPID" || return 1
  fi
  end=$((SECONDS + 660))
  until [ -e "$id.run/rc" ]; do
    [ $SECONDS -lt $end ] || { echo "kubectl $*: the host's kubectl bridge ($KUBECTL_BRIDGE) did not answer in 660 s" >&2; return 1; }
    read -r -t "${pauses[i]}" -u "$POLL_FD"
    [ $i -ge $((${#pauses[@]} - 1)) ] || i=$((i + 1))
  done
  cat "$id.run/out"; cat "$id.run/err" >&2
  read -r rc < "$id.run/rc"
  rm -rf "$id.run"
  return "${rc:-1}"
}

# Reads go through the `kubectl proxy` scenario.sh keeps running on
# 127.0.0.1:$API_PROXY_PORT, with jq: under TCG each kubectl process
# costs 3-15 s of the VM's one emulated core before it sends a request
# (a polling loop of them was most of a step's time, and took the CPU
# from the kubelets it waited for); a read through the proxy costs a few
# milliseconds. Writes, exec and logs stay kubectl's.
API_PROXY_PORT=8001
# api_get PATH: the API server's JSON at PATH; fails on an error answer
# (404: no such object), asks kubectl get --raw when the proxy does not
# answer.
api_get() {
  http_get $API_PROXY_PORT "$1"
  local rc=$?
  [ $rc = 2 ] || return $rc
  k get --raw "$1"
}
# api PATH FILTER: jq's FILTER (raw output) of it; fails when the GET does.
api() { local b; b=$(api_get "$1") && jq -r "$2" <<<"$b"; }
# pod_path NAME [NAMESPACE]: a pod's API path (default namespace: $NS).
pod_path() { echo "/api/v1/namespaces/${2:-$NS}/pods/$1"; }

# node_ready NODE: its Ready condition is True.
node_ready_status() { api "/api/v1/nodes/$1" '.status.conditions[]? | select(.type=="Ready") | .status'; }
node_ready() { [ "$(node_ready_status "$1")" = True ]; }
# node_unschedulable NODE: the Node's spec.unschedulable (true when
# cordoned), false when unset.
node_unschedulable() { api "/api/v1/nodes/$1" '.spec.unschedulable // false'; }
# DRAIN: apply's --drain as the steps that roll a change use it, evicting
# the pods no controller manages (the e2e's own) with the admin's identity.
DRAIN="--drain --force --delete-emptydir-data --kubeconfig $KUBECONFIG"
node_not_ready() {
  local s
  s=$(node_ready_status "$1") || return 1
  [ -n "$s" ] && [ "$s" != True ]
}

# expand_cpus LIST: "1,3-4" -> "1,3,4".
expand_cpus() {
  local out= part
  for part in ${1//,/ }; do
    case $part in *-*) out+="$(seq -s, "${part%-*}" "${part#*-}")," ;; *) out+="$part," ;; esac
  done
  echo "${out%,}"
}

# nodes_free_mib P: MiB free (MemFree) on partition P's NUMA nodes.
nodes_free_mib() {
  local n kb=0
  for n in $(expand_cpus "${MEMS[$1]}" | tr , " "); do
    kb=$((kb + $(awk '$3=="MemFree:"{print $4}' /sys/devices/system/node/node$n/meminfo)))
  done
  echo $((kb / 1024))
}

# most_free [P...]: of the partitions given (default: all), the one whose
# NUMA nodes have the most free memory. The steps that fill a partition
# take it: the VM's root file system is in memory (about 900 MiB), and
# lands on either node (CI of 2026-12-06: on node 1 in both boots, where
# the runs before had it on node 0; unpacked synchronously, initramfs_async=0,
# it still did: node 0, all of the VM's memory below 4 GiB, also holds the
# 756 MB initrd image while it is unpacked).
most_free() {
  local p best= most=-1 f
  for p in ${@:-$PARTITIONS}; do f=$(nodes_free_mib $p); [ "$f" -gt "$most" ] && { best=$p most=$f; }; done
  echo $best
}

# to_bytes QUANTITY: a Kubernetes quantity (0, 123, 64Ki, 32Mi, 2Gi) in bytes.
to_bytes() {
  case $1 in
    *Ki) echo $(( ${1%Ki} << 10 )) ;; *Mi) echo $(( ${1%Mi} << 20 )) ;; *Gi) echo $(( ${1%Gi} << 30 )) ;;
    ''|*[!0-9]*) echo "not-a-quantity:$1" ;; *) echo "$1" ;;
  esac
}

# socket_of P: partition P's containerd socket.
socket_of() { echo "/run/containerd-$1/containerd.sock"; }

# container_pid P POD: the PID of POD's first container, from containerd
# (the container ID kubelet reports, the task containerd runs).
container_pid() {
  local id
  id=$(api "$(pod_path "$2")" '.status.containerStatuses[0].containerID // empty' 2>/dev/null)
  id=${id#containerd://}
  [ -n "$id" ] || return 1
  ctr --address "$(socket_of "$1")" -n k8s.io tasks ls 2>/dev/null | awk -v id="$id" '$1==id{print $2}'
}

# pod_yaml NAME P RESOURCES [ENV]: a pod of one workload container for
# partition P, placed by kube-scheduler through P's labels; ENV, a YAML
# list of the container's environment (TOUCH_MIB).
pod_yaml() {
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  nodeSelector: {numa-type: ${COLOR[$2]}, e2e.numa-partition.io/boot: $BOOT}
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 2
  containers:
  - name: work
    image: e2e.local/workload:1
    imagePullPolicy: Never
    resources: $3${4:+
    env: $4}
YAML
}
# pod_running NAME [NAMESPACE]: the pod's phase is Running.
pod_running() { [ "$(api "$(pod_path "$1" "${2:-}")" .status.phase)" = Running ]; }
# pods_on NAMESPACE SELECTOR NODE: the names of the pods of SELECTOR (a
# label selector, k=v[,k=v]) bound to NODE.
pods_on() {
  local sel=${2//=/%3D}
  api "/api/v1/namespaces/$1/pods?labelSelector=${sel//,/%2C}&fieldSelector=spec.nodeName%3D$3" '.items[].metadata.name'
}

# expect_pinned P POD: pod POD (one container "work" asking 1 CPU, 64Mi of
# memory and 8Mi of 2Mi pages: pods/pinned.yaml.in) is bound to P's Node
# and its container runs pinned where P's placement puts it: one
# exclusive CPU of P's pod CPUs and P's memory node, in P's slice, as
# kubelet's managers (kubelet mode, the allocator mirroring them) or P's
# allocator (nri mode) decided. Sets PINNED_PID to the container's pid;
# returns 1 when the container has no task.
expect_pinned() {
  local p=$1 pod=$2 pid cpus uid cm type mm want_size
  expect_eq "pod $pod bound by the scheduler to" "$(api "$(pod_path $pod)" '.spec.nodeName // empty')" "$(node_name $p)"
  pid=$(container_pid $p $pod)
  [ -n "$pid" ] || { fail "no task for pod $pod in containerd-$p"; return 1; }
  cpus=$(status_field $pid Cpus_allowed_list)
  echo "  pod $pod container pid $pid: Cpus_allowed_list $cpus, Mems_allowed_list $(status_field $pid Mems_allowed_list), cgroup $(cgroup_of $pid)"
  # One exclusive CPU out of the partition's pod CPUs (node0: 1; node1: 2-3).
  case ",$(expand_cpus ${POD_CPUS[$p]})," in
    *",$cpus,"*) ok "pod $pod runs on exclusive CPU $cpus of its partition's ${POD_CPUS[$p]}" ;;
    *) fail "pod $pod Cpus_allowed_list is '$cpus', want one CPU of ${POD_CPUS[$p]}" ;;
  esac
  expect_eq "pod $pod Mems_allowed_list" "$(status_field $pid Mems_allowed_list)" "${MEMS[$p]}"
  expect_eq "pod $pod cgroup cpuset.cpus" "$(cat "$(cgroup_file $pid cpuset.cpus)" 2>&1)" "$cpus"
  expect_eq "pod $pod cgroup cpuset.mems" "$(cat "$(cgroup_file $pid cpuset.mems)" 2>&1)" "${MEMS[$p]}"
  case "$(cgroup_of $pid)" in
    /$p.slice/$p-kubepods.slice/*) ok "pod $pod's cgroup is under $p.slice/$p-kubepods.slice" ;;
    *) fail "pod $pod's cgroup $(cgroup_of $pid) is not under /$p.slice/$p-kubepods.slice" ;;
  esac
  uid=$(api "$(pod_path $pod)" .metadata.uid)
  if [ "${ALLOC_MODE[$p]}" = kubelet ]; then
    # kubelet's own checkpoints say the same: the CPU Manager gave the
    # container that CPU, the Memory Manager pinned it to the node.
    cm=$(jq -r --arg c work '[.entries[][$c]] | map(select(.)) | first // empty' $(kubelet_root $p)/cpu_manager_state 2>/dev/null)
    expect_eq "kubelet-$p cpu_manager_state assignment" "$cm" "$cpus"
    for type in memory hugepages-2Mi; do
      mm=$(jq -r --arg t $type '[.entries[][]] | .[0][] | select(.type==$t) | "\(.numaAffinity | map(tostring) | join(",")) \(.size)"' $(kubelet_root $p)/memory_manager_state 2>/dev/null)
      want_size=$(to_bytes $([ $type = memory ] && echo 64Mi || echo 8Mi))
      expect_eq "kubelet-$p memory_manager_state $type (node, bytes)" "$mm" "${MEMS[$p]} $want_size"
    done
    # The allocator saw the container through NRI and mirrors kubelet.
    expect_eq "allocator of $p mirrors kubelet's pinning (pinned nodes memory hugepages)" "$(allocation $p $uid)" "true ${MEMS[$p]} $(to_bytes 64Mi) $(to_bytes 8Mi)"
  else
    # The allocator placed it through NRI: kubelet's managers are off.
    expect_eq "kubelet-$p cpu_manager_state policy" "$(jq -r .policyName $(kubelet_root $p)/cpu_manager_state 2>&1)" none
    expect_eq "allocator of $p placed the container (pinned nodes memory hugepages)" "$(allocation $p $uid)" "true ${MEMS[$p]} $(to_bytes 64Mi) $(to_bytes 8Mi)"
    journalctl -b --no-pager -o cat -u numa-allocator@$p.service | has "container placed.*pod=$NS/$pod" \
      && ok "numa-allocator@$p logged the placement" || { fail "numa-allocator@$p did not log placing $pod"; journal_tail numa-allocator@$p.service; }
  fi
  PINNED_PID=$pid
}

# expect_hugepages: each partition's node holds its planned 2M pages
# (HUGEPAGES_2M), no 1G page, and nothing else system-wide.
expect_hugepages() {
  local p n sum=0
  for p in $PARTITIONS; do
    n=${MEMS[$p]}
    expect_eq "node$n 2M nr_hugepages" "$(cat /sys/devices/system/node/node$n/hugepages/hugepages-2048kB/nr_hugepages)" "${HUGEPAGES_2M[$p]}"
    expect_eq "node$n 1G nr_hugepages" "$(cat /sys/devices/system/node/node$n/hugepages/hugepages-1048576kB/nr_hugepages)" 0
    sum=$((sum + ${HUGEPAGES_2M[$p]}))
  done
  expect_eq "system-wide 2M nr_hugepages" "$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)" $sum
}

# allocated_keys P: the allocations P's allocator holds, "podUID/container"
# sorted on one line.
allocated_keys() { numa-partition allocations -p $1 -o json 2>/dev/null | jq -r '[.items[0].allocations[].podUID] | sort | join(" ")'; }
# running_keys P: what P's allocator must hold: every container of every
# running pod bound to P's Node (the steps' pods and the add-ons':
# flannel, kube-proxy, CoreDNS), placed through the same NRI.
running_keys() {
  api_get "/api/v1/pods?fieldSelector=spec.nodeName%3D$(node_name $1)%2Cstatus.phase%3DRunning" 2>/dev/null \
    | jq -r '[.items[] | select(.metadata.deletionTimestamp == null) | .metadata.uid as $u | .spec.containers[].name | "\($u)/\(.)"] | sort | join(" ")'
}
# holds_running P: P's allocator holds exactly the running containers.
holds_running() { [ -n "$(running_keys $1)" ] && [ "$(allocated_keys $1)" = "$(running_keys $1)" ]; }

# allocation P UID: the allocator's allocation of pod UID's container
# "work" in partition P as "pinned nodes memory hugepages-2Mi": the
# container's own (UID/work: container scope, kubelet's mirror) or its
# pod's, placed as one unit (UID: pod scope).
allocation() {
  numa-partition allocations -p "$1" -o json 2>/dev/null | jq -r --arg u "$2" \
    '.items[0].allocations[] | select(.podUID==($u+"/work") or .podUID==$u) | ((.containers[] | select(.name=="work")) // {}) as $c
     | "\(.pinned) \($c.numaNodes) \($c.memory.memory) \($c.memory["hugepages-2Mi"])"'
}

# cgroup_file PID FILE: a cgroup file of PID's cpuset group (v2: unified;
# v1: the cpuset hierarchy).
cgroup_file() {
  if [ "$E2E_CGROUP" = v2 ]; then echo "/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$1/cgroup")/$2"
  else echo "/sys/fs/cgroup/cpuset$(sed -n 's/^[0-9]*:cpuset://p' "/proc/$1/cgroup")/$2"; fi
}

# partition_units P: every unit apply starts for partition P.
partition_units() { echo "$1.slice containerd-$1.service numa-allocator@$1.service kubelet-$1.service"; }

# restarted BEFORE AFTER: the units whose PID differs between two
# main_pids readings, each followed by a space.
restarted() { diff <(echo "$1") <(echo "$2") | sed -n 's/^> \([^=]*\)=.*/\1/p' | tr '\n' ' '; }

# main_pids: "unit=pid" of every partition service, to tell restarts apart.
main_pids() {
  local p u
  for p in $PARTITIONS; do
    for u in containerd-$p.service numa-allocator@$p.service kubelet-$p.service; do
      echo "$u=$(unit_prop "$u" MainPID)"
    done
  done
}

# wait_healthy: every partition's kubelet answers /healthz.
wait_healthy() {
  local p rc=0
  for p in $PARTITIONS; do
    wait_until 180 "kubelet-$p /healthz on ${HEALTHZ[$p]}" kubelet_healthz $p \
      || { rc=1; journal_tail kubelet-$p.service; }
  done
  return $rc
}

# journal_tail UNIT: the unit's last log lines, into the step's log.
journal_tail() {
  echo "  --- last lines of $1 (systemctl: $(unit_prop "$1" ActiveState)/$(unit_prop "$1" SubState), NRestarts $(unit_prop "$1" NRestarts))"
  journalctl -b --no-pager -o cat -u "$1" | grep -v '^$' | tail -${2:-25} | sed 's/^/    /'
}

# seed_containerd P: partition P's containerd root, before apply starts
# that containerd: every image the e2e runs, unpacked, from the root
# run.sh built natively (test/e2e/seed.sh: importing them here cost 390 s
# of boot v1's emulated core and 640 s of boot v2's), as a host whose
# images were pulled before it was partitioned has them. tar runs on P's
# CPUs: in an initramfs root the files' memory is then on P's nodes, as
# a pull by P's containerd would put it (from the scenario's node it was
# the host's, and overflowed onto node 1: CI of 2026-12-05, step
# pressure, 850 MiB of node 1 in no slice); with the root on persistent
# memory (DAX, boot v2) no node holds it.
# The images it holds are listed in $SEEDED (seed.sh), one a line.
SEED=/e2e/images/containerd-root.tar SEEDED=/e2e/images/seeded.txt
seed_containerd() {
  local dir=/var/lib/containerd-$1
  install -d -m 0711 "$dir" &&
    taskset -c "${SLICE_CPUS[$1]}" tar -C "$dir" --numeric-owner --xattrs --xattrs-include='*' -xf $SEED
}

# deploy_addon NAME WHAT: an add-on of test/addons as a cluster would run
# it: this boot's Nodes (PARTITIONS) labelled
# e2e.numa-partition.io/addon-NAME=imported, then its manifest
# (/e2e/addons/NAME.yaml, rendered by run.sh) applied with its pods on the
# Nodes of that label only (every partition's containerd has its image:
# seed_containerd). The boots share the cluster: boots v2 and v1 apply the
# same kube-proxy and flannel DaemonSets (one pod network across both
# hosts), and a Node gets an add-on's pod only once this boot says so.
# The applied manifest is $STATE/NAME.yaml.
deploy_addon() {
  local name=$1 what=$2 p
  local label=e2e.numa-partition.io/addon-$name
  for p in $PARTITIONS; do
    # At apply the Node may not be registered yet (TLS bootstrap first).
    wait_until 600 "Node $(node_name $p) registered" api_get "/api/v1/nodes/$(node_name $p)" || die "Node $(node_name $p) never registered"
    run k label node --overwrite "$(node_name $p)" $label=imported >/dev/null || die "could not label Node $(node_name $p) $label"
  done
  if grep -q '^        kubernetes.io/os: linux$' /e2e/addons/$name.yaml; then
    sed "s|^        kubernetes.io/os: linux$|        kubernetes.io/os: linux\n        $label: imported|" /e2e/addons/$name.yaml > $STATE/$name.yaml
  else # flannel selects Nodes by affinity only
    sed "s|^      hostNetwork: true$|      hostNetwork: true\n      nodeSelector:\n        $label: imported|" /e2e/addons/$name.yaml > $STATE/$name.yaml
  fi
  grep -q "$label: imported" $STATE/$name.yaml || die "could not restrict $name to the Nodes labelled $label"
  run k apply -f $STATE/$name.yaml >/dev/null && ok "$what applied" || die "kubectl apply $name failed"
}

# ready_replicas DEPLOYMENT: its ready replicas (0 when unknown), in $NS.
ready_replicas() { api "/apis/apps/v1/namespaces/$NS/deployments/$1" '.status.readyReplicas // 0'; }
# sample_ready DEPLOYMENT: records its ready replicas once a second, in the
# background, into $STATE/DEPLOYMENT-ready ("epoch count" lines, a new
# file each time) until stop_sampling DEPLOYMENT (not in a subshell: it
# waits for the sampler) stops it; ready_runs prints them as "count
# value" runs.
sample_ready() {
  rm -f $STATE/$1-ready; touch $STATE/$1-sampling
  ( while [ -e $STATE/$1-sampling ]; do echo "$(date +%s) $(ready_replicas $1)" >> $STATE/$1-ready; sleep 1; done ) &
  READY_SAMPLER=$!
}
stop_sampling() { rm -f $STATE/$1-sampling; wait $READY_SAMPLER; }
ready_runs() { awk '{print $2}' $STATE/$1-ready | uniq -c | tr '\n' ' '; }
# expect_ready_throughout DEPLOYMENT MIN_SAMPLES WHEN: after stop_sampling,
# at least MIN_SAMPLES samples and a ready replica in every one.
expect_ready_throughout() {
  local f=$STATE/$1-ready samples least
  samples=$(wc -l < $f)
  least=$(awk 'NR==1||$2<m{m=$2} END{print m}' $f)
  [ "$samples" -ge "$2" ] && [ "$least" -ge 1 ] && ok "Deployment $1 kept a ready replica $3 ($samples samples, fewest ready $least)" \
    || fail "Deployment $1 had $least ready replicas at one point $3 ($samples samples): $(ready_runs $1)"
}
