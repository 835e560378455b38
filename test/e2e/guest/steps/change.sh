# 4. A changed config (max_pods of node1) re-applies only what changed:
# kubelet-node1 restarts with the new KubeletConfiguration, nothing else
# does, and its Node carries numa-partition's Event saying so. Then a
# change of node1's hugepage pool restarts its kubelet and its allocator,
# and keeps its mount namespace (and so its pods), there and back.
. /e2e/guest/lib.sh
requires apply
before=$(main_pids)
# The config ends with node1's [[partition]] table: the key goes there.
{ config_src; printf 'max_pods = 50\n'; } > $CONFIG
out=$(numa-partition apply 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || die "apply of the changed config exited $rc: $(tail -3 <<<"$out" | tr '\n' ' ')"
after=$(main_pids)
expect_eq "services restarted" "$(restarted "$before" "$after")" "kubelet-node1.service "
cfg=$(systemctl cat kubelet-node1.service | grep -o -- '--config=[^ ]*' | head -1 | cut -d= -f2)
grep -q '^maxPods: 50$' "$cfg" && ok "$cfg has maxPods: 50" || fail "kubelet-node1's config ${cfg:-?} has no 'maxPods: 50'"
wait_healthy
# The restarted kubelet reports its new capacity to the API server.
pods_capacity() { [ "$(api /api/v1/nodes/$(node_name node1) .status.capacity.pods)" = 50 ]; }
wait_until 120 "Node $(node_name node1) capacity pods = 50" pods_capacity
expect_eq "Node $(node_name node0) capacity pods (unchanged)" "$(api /api/v1/nodes/$(node_name node0) .status.capacity.pods)" 110
# What apply did is on the Node it changed, as kubectl describe node shows
# it (an Event of numa-partition's, recorded with the partition's kubelet
# credentials), and on no other.
node_events() {
  api "/api/v1/namespaces/default/events?fieldSelector=involvedObject.kind%3DNode,involvedObject.name%3D$1,reason%3DPartitionApplied" \
    '[.items[] | select(.source.component=="numa-partition") | .message] | join(" | ")'
}
applied=$(node_events $(node_name node1))
[[ $applied == *"applied generation "*kubelet* ]] && ok "Node $(node_name node1)'s Event PartitionApplied: $applied" \
  || fail "no PartitionApplied Event naming its kubelet on Node $(node_name node1): '$applied'"
expect_eq "PartitionApplied Events on Node $(node_name node0) (unchanged)" "$(node_events $(node_name node0))" ""

# repool N: node1's 2M pool set to N pages by a new config. The kubelet
# binds its new hugepage view at start (`view hugepages`) and the
# allocator serves the new pool (its drop-in's plan digest changes); the
# mount-namespace holder stays, and with it every pod's mounts.
repool() {
  local n=$1 before after holder want
  holder=$(unit_prop mountns-node1.service MainPID)
  before=$(main_pids)
  { config_src | sed "s/^count = ${HUGEPAGES_2M[node1]}\$/count = $n/"; printf 'max_pods = 50\n'; } > $CONFIG
  out=$(numa-partition apply 2>&1)
  rc=$?
  echo "$out"
  [ $rc = 0 ] || die "apply of node1's pool of $n pages exited $rc: $(tail -3 <<<"$out" | tr '\n' ' ')"
  after=$(main_pids)
  expect_eq "services restarted for node1's pool of $n pages" "$(restarted "$before" "$after")" "numa-allocator@node1.service kubelet-node1.service "
  expect_eq "mountns-node1.service's MainPID (the namespace stays)" "$(unit_prop mountns-node1.service MainPID)" "$holder"
  expect_eq "node${MEMS[node1]} 2M nr_hugepages" "$(cat /sys/devices/system/node/node${MEMS[node1]}/hugepages/hugepages-2048kB/nr_hugepages)" "$n"
  wait_healthy
  want=$((n << 21))
  pool_capacity() { [ "$(to_bytes "$(api /api/v1/nodes/$(node_name node1) '.status.capacity["hugepages-2Mi"]')")" = $want ]; }
  wait_until 120 "Node $(node_name node1) capacity hugepages-2Mi = $n pages" pool_capacity
  expect_eq "Node $(node_name node1) allocatable hugepages-2Mi (bytes)" "$(to_bytes "$(api /api/v1/nodes/$(node_name node1) '.status.allocatable["hugepages-2Mi"]')")" $want
}
if [ -n "${HUGEPAGES_2M[node1]:-}" ]; then
  repool $((HUGEPAGES_2M[node1] + 8))
  # Back to the planned pool: the later steps expect it.
  repool ${HUGEPAGES_2M[node1]}
  expect_hugepages
fi
main_pids > $STATE/pids-after-apply
finish
