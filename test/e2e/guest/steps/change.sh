# 4. A changed config (max_pods of node1) re-applies only what changed:
# kubelet-node1 restarts with the new KubeletConfiguration, nothing else does.
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
changed=$(diff <(echo "$before") <(echo "$after") | sed -n 's/^> \([^=]*\)=.*/\1/p' | tr '\n' ' ')
expect_eq "services restarted" "$changed" "kubelet-node1.service "
cfg=$(systemctl cat kubelet-node1.service | grep -o -- '--config=[^ ]*' | head -1 | cut -d= -f2)
grep -q '^maxPods: 50$' "$cfg" && ok "$cfg has maxPods: 50" || fail "kubelet-node1's config ${cfg:-?} has no 'maxPods: 50'"
wait_healthy
# The restarted kubelet reports its new capacity to the API server.
pods_capacity() { [ "$(api /api/v1/nodes/$(node_name node1) .status.capacity.pods)" = 50 ]; }
wait_until 120 "Node $(node_name node1) capacity pods = 50" pods_capacity
expect_eq "Node $(node_name node0) capacity pods (unchanged)" "$(k get node $(node_name node0) -o jsonpath='{.status.capacity.pods}')" 110
main_pids > $STATE/pids-after-apply
finish
