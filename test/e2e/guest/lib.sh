# lib.sh — helpers for the guest's scenario steps (sourced, bash).
# A step is a script that exits 0 when everything it asserts holds; it
# explains every failure on a line starting with "FAIL:".
set -uo pipefail
export PATH=/e2e/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
. /e2e/env
STATE=/run/e2e           # shared between steps of one boot
mkdir -p "$STATE"
FAILED=0

fail() { echo "FAIL: $*" >&2; FAILED=1; }
die() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "  ok: $*"; }
# finish ends a step: non-zero when any fail was recorded.
finish() { exit "$FAILED"; }

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

# wait_until SECONDS DESCRIPTION CMD...: poll CMD every half second.
wait_until() {
  local limit=$1 what=$2; shift 2
  local end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $end ]; then fail "timed out after ${limit}s waiting for $what"; return 1; fi
    sleep 0.5
  done
  ok "$what"
}

# http_get PORT PATH: body of a plain HTTP GET on 127.0.0.1 (no curl here).
http_get() {
  local body
  exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
  printf 'GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "$2" >&3
  body=$(cat <&3)
  exec 3<&-
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
  declare -A HEALTHZ=([node0]=10248 [node1]=10258) # host mode: healthz_port + index × port_stride
  declare -A HUGEPAGES_2M=([node0]=16 [node1]=24)
  # The host's memory is not locked (templates/host.dropin.tmpl says why):
  # system.slice may allocate on every node, so apply can fill node 1's pools.
  HOST_MEMS=0-1
fi
CONFIG=/etc/numa-partition/config.toml
# Boot v2 runs the default network mode: each partition in a network
# namespace of its own (np-<partition>) with its own address on the
# bridge npbr0 (10.212.0.0/24, masqueraded towards the API server), every
# kubelet on the standard ports in its namespace. Boots v1 and n4 keep
# the explicit host mode (one namespace, strided ports).
NET_MODE=host
if [ "$E2E_MODE" = v2 ]; then
  NET_MODE=namespace
  declare -A HEALTHZ=([node0]=10248 [node1]=10248)
  declare -A ADDRESS=([node0]=10.212.0.2 [node1]=10.212.0.3)
fi
# config_src: the boot's config (host mode said explicitly where it runs).
config_src() {
  [ "$NET_MODE" = host ] && printf '[network]\nmode = "host"\n\n'
  cat "$CONFIG_SRC"
}
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
# Every kubelet's root dir is on one shared filesystem (a tmpfs: the VM
# has no disk), which the plan splits by CPUs (kubelet.root_dir).
KUBELETS_FS=/var/lib/kubelets
kubelet_root() { echo $KUBELETS_FS/$1; }

# --- the cluster (test/e2e/cluster on the host, reached over QEMU's
# guestfwd): kubectl as the cluster admin, in this boot's namespace.
export KUBECONFIG=/e2e/cluster/admin.conf
NS=e2e-$E2E_MODE
BOOT=$(cat /etc/hostname)
node_name() { echo "$BOOT-$1"; }
k() { kubectl --request-timeout=20s "$@"; }

# node_ready NODE: its Ready condition is True.
node_ready() {
  [ "$(k get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}
node_not_ready() {
  local s
  s=$(k get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) || return 1
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
  id=$(k -n "$NS" get pod "$2" -o jsonpath='{.status.containerStatuses[0].containerID}' 2>/dev/null)
  id=${id#containerd://}
  [ -n "$id" ] || return 1
  ctr --address "$(socket_of "$1")" -n k8s.io tasks ls 2>/dev/null | awk -v id="$id" '$1==id{print $2}'
}

# pod_yaml NAME P RESOURCES: a pod of one workload container for
# partition P, placed by kube-scheduler through P's labels.
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
    resources: $3
YAML
}
pod_running() { [ "$(k -n $NS get pod "$1" -o jsonpath='{.status.phase}')" = Running ]; }

# allocation P UID: the allocator's allocation of pod UID's container
# "work" in partition P as "pinned nodes memory hugepages-2Mi": the
# container's own (UID/work: container scope, kubelet's mirror) or its
# pod's, placed as one unit (UID: pod scope).
allocation() {
  numa-partition allocations -p "$1" -o json 2>/dev/null | jq -r --arg u "$2" \
    '.[0].allocations[] | select(.podUID==($u+"/work") or .podUID==$u) | ((.containers[] | select(.name=="work")) // {}) as $c
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

# deploy_addon NAME WHAT: an add-on of test/addons as a cluster would run
# it: its image (/e2e/images/addons/NAME.tar) imported into every
# partition's containerd (no registry), its manifest (/e2e/addons/NAME.yaml,
# rendered by run.sh) applied with its DaemonSet restricted to this boot's
# Nodes (the other boots share the cluster, and may run host mode, where
# node agents collide). The applied manifest is $STATE/NAME.yaml.
deploy_addon() {
  local name=$1 what=$2 p
  for p in $PARTITIONS; do
    run ctr --address "$(socket_of $p)" -n k8s.io images import /e2e/images/addons/$name.tar >/dev/null \
      && ok "$name image imported into containerd-$p" || fail "ctr images import $name.tar into containerd-$p failed"
  done
  sed "s|^        kubernetes.io/os: linux$|        kubernetes.io/os: linux\n        e2e.numa-partition.io/boot: $BOOT|" /e2e/addons/$name.yaml > $STATE/$name.yaml
  grep -q "e2e.numa-partition.io/boot: $BOOT" $STATE/$name.yaml || die "could not restrict $name to this boot's Nodes"
  run k apply -f $STATE/$name.yaml >/dev/null && ok "$what applied" || die "kubectl apply $name failed"
}
