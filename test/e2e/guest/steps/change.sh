# 4. A changed config (max_pods of node1) re-applies only what changed:
# kubelet-node1 restarts with the new KubeletConfiguration, nothing else
# does, and its Node carries numa-partition's Event saying so.
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
main_pids > $STATE/pids-after-apply
finish
