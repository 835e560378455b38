# Each Node's usage is its partition's (issue 36): kubelet's summary API
# (what metrics-server, `kubectl top node` and the eviction manager read)
# takes the node's CPU and memory from the root cgroup, and in each
# partition's mount namespace the root's usage files are the slice's own
# (`numa-partition view mount`, run by mountns-<partition>.service).
# Before, every Node reported the whole host, and a pod touching 400 MiB
# in one partition moved the other's working set by +411 MiB.
. /e2e/guest/lib.sh
requires apply
a=${PARTITIONS##* } b=${PARTITIONS%% *} # A: the last partition, B: the first
# summary NODE FILTER: jq's FILTER of the Node's summary (through the API
# server's node proxy, as metrics-server reads it).
summary() { api "/api/v1/nodes/$1/proxy/stats/summary?only_cpu_and_memory=true" "$2"; }
ws() { summary "$(node_name $1)" .node.memory.workingSetBytes; }
# cpu_ns CGROUP: the cgroup's CPU time in ns as the kernel counts it (""
# is the root: the host's), read in the host's namespace.
cpu_ns() {
  if [ "$E2E_CGROUP" = v2 ]; then
    echo $(( $(awk '$1=="usage_usec"{print $2}' /sys/fs/cgroup/${1:+$1/}cpu.stat) * 1000 ))
  else cat /sys/fs/cgroup/cpuacct/${1:+$1/}cpuacct.usage; fi
}
MiB=$((1 << 20))

# The mount namespace shows the slice's files at the root's: what kubelet
# reads there is the slice's, and differs from the host's.
for p in $PARTITIONS; do
  pid=$(systemctl show -p MainPID --value mountns-$p.service)
  if [ "$E2E_CGROUP" = v2 ]; then f=/sys/fs/cgroup/memory.stat; else f=/sys/fs/cgroup/memory/memory.usage_in_bytes; fi
  expect_eq "partition $p's mount namespace: the file at $f" \
    "$(nsenter --mount=/proc/$pid/ns/mnt findmnt -n -o FSROOT --mountpoint $f 2>&1)" "/$p.slice/${f##*/}"
done

# CPU: each Node's cumulative CPU time is its slice's, which only grows:
# never more than the slice has now, and together less than the host's
# (every Node reported the host's before).
sum=0
for p in $PARTITIONS; do
  n=$(node_name $p)
  have() { [[ $(summary $n .node.cpu.usageCoreNanoSeconds) =~ ^[0-9]+$ ]]; }
  wait_until 120 "Node $n's summary has CPU" have || continue
  node=$(summary $n .node.cpu.usageCoreNanoSeconds)
  slice=$(cpu_ns $p.slice)
  [ "$node" -le "$slice" ] && ok "Node $n CPU time $((node / 1000000)) ms, its slice's now $((slice / 1000000)) ms" \
    || fail "Node $n reports $((node / 1000000)) ms of CPU, more than $p.slice's $((slice / 1000000)) ms"
  sum=$((sum + node))
done
host=$(cpu_ns "")
[ "$sum" -lt "$host" ] && ok "the Nodes' CPU times add up to $((sum / 1000000)) ms, less than the host's $((host / 1000000)) ms" \
  || fail "the Nodes' CPU times add up to $((sum / 1000000)) ms, the host's is $((host / 1000000)) ms"

# Memory: a pod touching 400 MiB in partition A raises A's working set
# and moves B's by less than a tenth of that.
both_ws() { [[ $(ws $a) =~ ^[0-9]+$ ]] && [[ $(ws $b) =~ ^[0-9]+$ ]]; }
wait_until 120 "both Nodes' summaries have a working set" both_ws || die "no working set in the summaries"
a0=$(ws $a) b0=$(ws $b)
pod_yaml toucher $a '{}' '[{name: TOUCH_MIB, value: "400"}]' | k apply -f - >/dev/null || fail "creating pod toucher"
touched() { k -n $NS logs toucher 2>/dev/null | has '^cpus='; }
wait_until $POD_START_S "pod toucher (400 MiB) Running in partition $a, its memory touched" touched
raised() { [ $(( $(ws $a) - a0 )) -ge $((300 * MiB)) ]; }
if wait_until 180 "Node $(node_name $a)'s working set up by at least 300 MiB" raised; then
  a1=$(ws $a) b1=$(ws $b)
  da=$(( (a1 - a0) / MiB )) db=$(( (b1 - b0) / MiB ))
  ok "Node $(node_name $a) (with the pod): working set $((a0 / MiB)) -> $((a1 / MiB)) MiB (+$da)"
  [ ${db#-} -lt 40 ] && ok "Node $(node_name $b) (without): $((b0 / MiB)) -> $((b1 / MiB)) MiB ($db), less than 10% of 400 MiB" \
    || fail "Node $(node_name $b) moved by $db MiB while the pod in $a touched 400 MiB"
else
  echo "  working sets: $a $(( $(ws $a) / MiB )) MiB (was $((a0 / MiB))), $b $(( $(ws $b) / MiB )) MiB (was $((b0 / MiB)))"
fi
k -n $NS delete pod toucher --wait=false >/dev/null 2>&1
finish
