# Each partition's usage (issue 36). kubelet's summary API (what
# metrics-server, `kubectl top node` and the eviction manager read) takes
# a Node's CPU and memory from the root cgroup. In each partition's mount
# namespace (`numa-partition view hold`, mountns-<partition>.service's
# holder) the root's CPU files are the slice's own; its memory files, on
# cgroup v1, the memory of the partition's NUMA nodes (served) or, for a
# kubelet shown the whole machine, the slice's; on cgroup v2 the slice's,
# bound, and kubelet runs with openat2 hidden (its cgroup library refuses
# a bound file through openat2): each Node reports its partition. Before,
# every Node reported the host, and a pod touching 400 MiB in one
# partition moved the other's working set by +411 MiB.
. /e2e/guest/lib.sh
requires apply
MiB=$((1 << 20))
# summary NODE FILTER: jq's FILTER of the Node's summary (through the API
# server's node proxy, as metrics-server reads it).
summary() { api "/api/v1/nodes/$1/proxy/stats/summary?only_cpu_and_memory=true" "$2"; }
kubelet_ws() { summary "$(node_name $1)" .node.memory.workingSetBytes; }
kubelet_cpu() { summary "$(node_name $1)" .node.cpu.usageCoreNanoSeconds; }
# status_usage P FIELD: the partition's usage as `numa-partition status` reads it.
status_usage() { numa-partition --output json status --no-api 2>/dev/null | jq -r --arg p $1 --arg f $2 '.partitions[] | select(.name==$p) | .usage[$f]'; }
status_ws() { status_usage $1 memoryWorkingSetBytes; }
# cpu_ns CGROUP: the cgroup's CPU time in ns as the kernel counts it (""
# is the root: the host's), read in the host's namespace.
cpu_ns() {
  if [ "$E2E_CGROUP" = v2 ]; then
    echo $(( $(awk '$1=="usage_usec"{print $2}' /sys/fs/cgroup/${1:+$1/}cpu.stat) * 1000 ))
  else cat /sys/fs/cgroup/cpuacct/${1:+$1/}cpuacct.usage; fi
}
number() { [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -gt 0 ]; }

plan=$(numa-partition --output json plan 2>/dev/null) || die "numa-partition plan failed"
whole_machine() { jq -r --arg p $1 '.nodeResources[] | select(.partition==$p) | .wholeMachine // ""' <<<"$plan"; }
# nodes_used_bytes P: MemTotal − MemFree of partition P's NUMA nodes, now.
nodes_used_bytes() {
  local n kb=0
  for n in $(expand_cpus "$(jq -r --arg p $1 '.partitions[] | select(.name==$p) | .nodes' <<<"$plan")" | tr , " "); do
    kb=$((kb + $(awk '$3=="MemTotal:"{t=$4} $3=="MemFree:"{f=$4} END{print t-f}' /sys/devices/system/node/node$n/meminfo)))
  done
  echo $((kb * 1024))
}

# What each partition's mount namespace shows at the root cgroup's files.
# On v1: the slice's CPU time, bound; the memory of its NUMA nodes when
# its kubelet is shown them (served by the holder, FUSE), else its slice's.
for p in $PARTITIONS; do
  pid=$(systemctl show -p MainPID --value mountns-$p.service)
  in_ns() { nsenter --mount=/proc/$pid/ns/mnt "$@"; }
  if [ "$E2E_CGROUP" = v2 ]; then
    for f in /sys/fs/cgroup/cpu.stat /sys/fs/cgroup/memory.stat; do
      expect_eq "partition $p's mount namespace: the file at $f" "$(in_ns findmnt -n -o FSROOT --mountpoint $f 2>&1)" "/$p.slice/${f##*/}"
    done
    kpid=$(systemctl show -p MainPID --value kubelet-$p.service)
    expect_eq "kubelet-$p (pid $kpid) runs under a seccomp filter (openat2 hidden)" "$(awk '$1=="Seccomp:"{print $2}' /proc/$kpid/status)" 2
    continue
  fi
  f=/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage
  expect_eq "partition $p's mount namespace: the file at $f" "$(in_ns findmnt -n -o FSROOT --mountpoint $f 2>&1)" "/$p.slice/${f##*/}"
  f=/sys/fs/cgroup/memory/memory.usage_in_bytes
  if [ -n "$(whole_machine $p)" ]; then
    expect_eq "partition $p's mount namespace (shown the whole machine): the file at $f" "$(in_ns findmnt -n -o FSROOT --mountpoint $f 2>&1)" "/$p.slice/${f##*/}"
    continue
  fi
  fstype=$(in_ns findmnt -n -o FSTYPE --mountpoint $f 2>&1)
  [[ $fstype == fuse* ]] && ok "partition $p's mount namespace: $f is served by the holder ($fstype)" || fail "partition $p's $f: file system '$fstype', want the holder's FUSE view"
  shown=$(in_ns cat $f) want=$(nodes_used_bytes $p)
  diff=$((shown - want))
  [ ${diff#-} -lt $((64 << 20)) ] && ok "partition $p's root memory usage ${shown} B is its nodes' MemTotal − MemFree (${want} B read just after)" \
    || fail "partition $p's root memory usage is $shown B, its nodes' MemTotal − MemFree $want B"
  grep -q '^total_inactive_file [0-9]*$' <<<"$(in_ns cat /sys/fs/cgroup/memory/memory.stat)" && ok "partition $p's root memory.stat has total_inactive_file" \
    || fail "partition $p's root memory.stat: $(in_ns head -3 /sys/fs/cgroup/memory/memory.stat 2>&1)"
done

# The machine each kubelet is shown (kubeletgen/machine.go): its NUMA
# node directories alone, and a /proc/meminfo whose MemTotal is theirs,
# served live by the holder (FUSE) and read here as kubelet reads it;
# status reads the same.
status_json=$(numa-partition --output json status --no-api 2>/dev/null)
for p in $PARTITIONS; do
  pid=$(systemctl show -p MainPID --value mountns-$p.service)
  in_ns() { nsenter --mount=/proc/$pid/ns/mnt "$@"; }
  host_kb=$(awk '$1=="MemTotal:"{print $2}' /proc/meminfo)
  shown_dirs=$(in_ns ls /sys/devices/system/node | grep '^node[0-9]' | sort | xargs)
  shown_kb=$(in_ns awk '$1=="MemTotal:"{print $2}' /proc/meminfo)
  whole=$(whole_machine $p)
  if [ -n "$whole" ]; then
    expect_eq "partition $p's namespace (shown the whole machine): every NUMA node directory" "$shown_dirs" "$(ls /sys/devices/system/node | grep '^node[0-9]' | sort | xargs)"
    expect_eq "partition $p's namespace (shown the whole machine): the host's MemTotal (kB)" "$shown_kb" "$host_kb"
    continue
  fi
  nodes=$(jq -r --arg p $p '.partitions[] | select(.name==$p) | .nodes' <<<"$plan")
  want_dirs=$(for n in $(expand_cpus "$nodes" | tr , " "); do echo node$n; done | sort | xargs)
  expect_eq "partition $p's namespace: the NUMA node directories" "$shown_dirs" "$want_dirs"
  # The CPUs they link, as cAdvisor counts them: the partition's, the
  # host's on its nodes and, for a static CPU Manager with none there,
  # the host's CPUs its first node lists too (plan's shownHostCPUs);
  # status reads the same (its nodes' cpulist).
  want_cpus=$(jq -r --arg p $p '[(.partitions[] | select(.name==$p) | .cpus, .hostReservedCPUs),
    (.nodeResources[] | select(.partition==$p) | .shownHostCPUs)] | map(select(. != null and . != "")) | join(",")' <<<"$plan")
  want_cpus=$(expand_cpus "$want_cpus" | tr , '\n' | sort -n | paste -sd,)
  expect_eq "partition $p's namespace: the CPUs its node directories link" \
    "$(in_ns sh -c 'ls -d /sys/devices/system/node/node*/cpu[0-9]*' | sed 's/.*cpu//' | sort -n | paste -sd,)" "$want_cpus"
  expect_eq "status: partition $p's kubelet is shown CPUs" \
    "$(expand_cpus "$(jq -r --arg p $p '.partitions[] | select(.name==$p) | .machine.cpus' <<<"$status_json")" | tr , '\n' | sort -n | paste -sd,)" "$want_cpus"
  want_kb=0
  for n in $(expand_cpus "$nodes" | tr , " "); do want_kb=$((want_kb + $(awk '$3=="MemTotal:"{print $4}' /sys/devices/system/node/node$n/meminfo))); done
  expect_eq "partition $p's namespace: /proc/meminfo MemTotal (kB), its nodes'" "$shown_kb" "$want_kb"
  [ "$want_kb" -lt "$host_kb" ] && ok "partition $p's MemTotal ${want_kb} kB is less than the host's ${host_kb} kB" || fail "partition $p's MemTotal $want_kb kB, host's $host_kb kB"
  expect_eq "status: partition $p's kubelet is shown MemTotal (bytes)" \
    "$(jq -r --arg p $p '.partitions[] | select(.name==$p) | .machine.memTotalBytes' <<<"$status_json")" "$((want_kb * 1024))"
  # Served live, with the node figures summed (MemFree among them).
  free1=$(in_ns awk '$1=="MemFree:"{print $2}' /proc/meminfo)
  number "$free1" && ok "partition $p's /proc/meminfo has MemFree ($free1 kB)" || fail "partition $p's /proc/meminfo has no MemFree: $(in_ns head -3 /proc/meminfo 2>&1)"
done

# CPU. Each Node's cumulative CPU time in the summary: its slice's,
# which only grows: more than 0 (nothing read as 0), never more than the
# slice has now, and on v1 together less than the host's (every Node
# reported the host's before).
sum=0
for p in $PARTITIONS; do
  n=$(node_name $p)
  have() { number "$(kubelet_cpu $p)"; }
  wait_until 120 "Node $n's summary has a CPU time above 0" have || continue
  node=$(kubelet_cpu $p) slice=$(cpu_ns $p.slice) status=$(status_usage $p cpuNanoseconds)
  echo "  Node $n: CPU time in kubelet's summary $((node / 1000000)) ms; $p.slice now $((slice / 1000000)) ms, in status $((status / 1000000)) ms"
  number "$status" && [ "$status" -le "$(cpu_ns $p.slice)" ] && ok "status: partition $p's CPU time is its slice's" \
    || fail "status: partition $p's CPU time is '$status', its slice's $slice"
  [ "$node" -le "$slice" ] && ok "Node $n's CPU time is at most its slice's" \
    || fail "Node $n reports $((node / 1000000)) ms of CPU, more than $p.slice's $((slice / 1000000)) ms"
  sum=$((sum + node))
done
# On v1 the root's cpuacct.usage is the sum of every task's run time, as
# the slices' are; on v2 the root's cpu.stat is the kernel's tick-sampled
# CPU time, which under the e2e's emulated CPUs fell far behind the
# slices' run times (9040 s of slices against 5856 s of root): no sum.
if [ "$E2E_CGROUP" = v1 ]; then
  host=$(cpu_ns "")
  [ "$sum" -lt "$host" ] && ok "the Nodes' CPU times add up to $((sum / 1000000)) ms, less than the host's $((host / 1000000)) ms" \
    || fail "the Nodes' CPU times add up to $((sum / 1000000)) ms, the host's is $((host / 1000000)) ms"
fi

# Memory: a pod touching up to 400 MiB in partition A raises A's working
# set and moves B's by less than a tenth of that, in kubelet's summary and
# in status. A is the partition whose NUMA nodes have the most free
# memory (lib.sh most_free), and the pod touches what they can give
# above A's evictionHard with 128 MiB to spare: the VM's root file system
# is in memory on either node, and each partition's containerd unpacks
# its images onto its own node (run of 2026-12-05: 1.3 GB of node 1 was
# in use by this step, 387 MB free, and a 400 MiB pod there met the
# kernel's OOM killer and crash-looped through the steps after).
a=$(most_free)
most=$(nodes_free_mib $a)
for p in $PARTITIONS; do [ $p != $a ] && { b=$p; break; }; done
thr=$(api "/api/v1/nodes/$(node_name $a)/proxy/configz" '.kubeletconfig.evictionHard["memory.available"]')
[[ $thr =~ ^([0-9]+)Mi$ ]] || die "A's evictionHard memory.available is '$thr', want NMi (the e2e config)"
touch_mib=$((most - ${BASH_REMATCH[1]} - 128))
[ $touch_mib -le 400 ] || touch_mib=400
[ $touch_mib -ge 160 ] || die "partition $a's nodes have $most MiB free, evictionHard $thr: no room for a pod of 160 MiB (the VM is short of memory)"
echo "  partition $a: $most MiB free on its nodes, evictionHard $thr; the pod touches $touch_mib MiB"
sources="kubelet status"
both() { local s; for s in $sources; do number "$(${s}_ws $a)" && number "$(${s}_ws $b)" || return 1; done; }
wait_until 120 "working sets above 0 ($sources)" both || die "no working set: kubelet $(kubelet_ws $a)/$(kubelet_ws $b), status $(status_ws $a)/$(status_ws $b)"
declare -A before
for s in $sources; do before[$s.$a]=$(${s}_ws $a) before[$s.$b]=$(${s}_ws $b); done
# The pod goes whatever happens below: one left crash-looping fails the
# steps after this one.
trap 'k -n $NS delete pod toucher --wait=false >/dev/null 2>&1' EXIT
pod_yaml toucher $a '{}' "[{name: TOUCH_MIB, value: \"$touch_mib\"}]" | k apply -f - >/dev/null || die "creating pod toucher"
touched() { k -n $NS logs toucher 2>/dev/null | has '^cpus='; }
wait_until $POD_START_S "pod toucher ($touch_mib MiB) Running in partition $a, its memory touched" touched || die "pod toucher never touched its memory"
for s in $sources; do
  raised() { [ $(( $(${s}_ws $a) - ${before[$s.$a]} )) -ge $((touch_mib * 3 / 4 * MiB)) ]; }
  if wait_until 180 "$s: partition $a's working set up by at least $((touch_mib * 3 / 4)) MiB" raised; then
    a1=$(${s}_ws $a) b1=$(${s}_ws $b)
    da=$(( (a1 - ${before[$s.$a]}) / MiB )) db=$(( (b1 - ${before[$s.$b]}) / MiB ))
    ok "$s: partition $a (with the pod): working set $((${before[$s.$a]} / MiB)) -> $((a1 / MiB)) MiB (+$da)"
    [ ${db#-} -lt $((touch_mib / 10)) ] && ok "$s: partition $b (without): $((${before[$s.$b]} / MiB)) -> $((b1 / MiB)) MiB ($db), less than 10% of $touch_mib MiB" \
      || fail "$s: partition $b moved by $db MiB while the pod in $a touched $touch_mib MiB"
  else
    echo "  $s: working sets: $a $(( $(${s}_ws $a) / MiB )) MiB (was $((${before[$s.$a]} / MiB))), $b $(( $(${s}_ws $b) / MiB )) MiB (was $((${before[$s.$b]} / MiB)))"
  fi
done
finish
