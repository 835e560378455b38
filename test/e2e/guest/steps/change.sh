# 4. A changed config (max_pods of node1 and, where pools are planned,
# node1's 2M pool grown by 8 pages) re-applies only what changed: node1's
# kubelet restarts with the new KubeletConfiguration and binds its new
# hugepage view at start (`view hugepages`), node1's allocator restarts
# to serve the new pool (its drop-in's plan digest), nothing else does:
# not node1's mount-namespace holder (its pods keep their mounts), nothing
# of node0. The Node shows the new capacity, and carries numa-partition's
# Event saying so. The pool then goes back, as the later steps expect it.
# (max_pods alone restarts the kubelet alone: render's unit tests.)
. /e2e/guest/lib.sh
requires apply
POOL=${HUGEPAGES_2M[node1]:-}
GROWN=${POOL:+$((POOL + 8))}
# reconfigure N: the config with max_pods = 50 on node1 and, with pools,
# node1's pool of N pages; applied, and only node1's kubelet and (with a
# new pool) allocator restarted, its holder kept.
reconfigure() {
  local n=$1 before after holder want=kubelet-node1.service
  holder=$(unit_prop mountns-node1.service MainPID)
  before=$(main_pids)
  # The config ends with node1's [[partition]] table: the key goes there.
  { config_src | sed "s/^count = $POOL\$/count = $n/"; printf 'max_pods = 50\n'; } > $CONFIG
  out=$(numa-partition apply 2>&1)
  rc=$?
  echo "$out"
  [ $rc = 0 ] || die "apply of the changed config (node1's pool ${n:-none}) exited $rc: $(tail -3 <<<"$out" | tr '\n' ' ')"
  after=$(main_pids)
  [ -n "$POOL" ] && want="numa-allocator@node1.service $want"
  expect_eq "services restarted (node1's pool ${n:-none})" "$(restarted "$before" "$after")" "$want "
  expect_eq "mountns-node1.service's MainPID (the namespace stays)" "$(unit_prop mountns-node1.service MainPID)" "$holder"
  [ -z "$POOL" ] || expect_eq "node${MEMS[node1]} 2M nr_hugepages" \
    "$(cat /sys/devices/system/node/node${MEMS[node1]}/hugepages/hugepages-2048kB/nr_hugepages)" "$n"
  wait_healthy
}
reconfigure "$GROWN"
cfg=$(systemctl cat kubelet-node1.service | grep -o -- '--config=[^ ]*' | head -1 | cut -d= -f2)
grep -q '^maxPods: 50$' "$cfg" && ok "$cfg has maxPods: 50" || fail "kubelet-node1's config ${cfg:-?} has no 'maxPods: 50'"
# The restarted kubelet reports its new capacity to the API server: its
# pods and, shown its new pool, its pages.
capacity() { api /api/v1/nodes/$(node_name node1) "[.status.capacity.pods, (.status.capacity[\"hugepages-2Mi\"] // \"0\")] | join(\" \")"; }
new_capacity() { local pods pages; read -r pods pages <<<"$(capacity)"; [ "$pods $(to_bytes "$pages")" = "50 $(( ${GROWN:-0} << 21 ))" ]; }
wait_until 120 "Node $(node_name node1) capacity pods = 50, hugepages-2Mi = ${GROWN:-0} pages" new_capacity || echo "  capacity: $(capacity)"
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

if [ -n "$POOL" ]; then
  # Back to the planned pool.
  reconfigure "$POOL"
  expect_hugepages
fi
main_pids > $STATE/pids-after-apply
finish
