# A partition's hugepage pool changed on a live host (#37): node1's 2M
# pool grows by 8 pages in the config, then goes back. Each apply
# restarts exactly node1's kubelet, which binds its new hugepage view at
# start (`view hugepages`), and node1's allocator, which serves the new
# pool (its drop-in carries the digest of what it reads of the plan);
# node1's mount-namespace holder keeps its MainPID, so the namespace and
# every pod's mounts stay (the view was once the holder's binds, and a
# new count re-created every pod of the partition). The kernel's pool,
# the view in the namespace and the Node's hugepages-2Mi capacity and
# allocatable follow, and node1's pinned pod keeps its container.
. /e2e/guest/lib.sh
requires placement
B=node1
POOL=${HUGEPAGES_2M[$B]:-}
[ -n "$POOL" ] || die "boot $E2E_MODE plans no hugepage pool on $B"
N=${MEMS[$B]}
holder() { unit_prop mountns-$B.service MainPID; }
pool_file=/sys/devices/system/node/node$N/hugepages/hugepages-2048kB/nr_hugepages
pinned=$(container_pid $B pinned-$B)
[ -n "$pinned" ] || die "pod pinned-$B has no running container to watch"
cp $CONFIG $STATE/config-before-repool.toml
# repool N: the config with B's pool of N pages, applied.
repool() {
  local n=$1 before after held shown want=$(($1 << 21))
  held=$(holder) before=$(main_pids)
  sed "s/^count = $POOL\$/count = $n/" $STATE/config-before-repool.toml > $CONFIG
  grep -q "^count = $n\$" $CONFIG || die "no 'count = $POOL' line in the config to change"
  out=$(numa-partition apply 2>&1); rc=$?
  [ $rc = 0 ] || { fail "apply of $B's pool of $n pages exited $rc: $(tail -3 <<<"$out" | tr '\n' ' ')"; return; }
  after=$(main_pids)
  # Not node0's kubelet: apply sizes the pool itself and does not restart
  # the hugepages oneshot, which every kubelet Requires= (it did, and
  # node0's kubelet restarted for node1's pool).
  expect_eq "services restarted ($B's pool of $n pages)" "$(restarted "$before" "$after")" "numa-allocator@$B.service kubelet-$B.service "
  expect_eq "mountns-$B.service's MainPID (its namespace stays)" "$(holder)" "$held"
  expect_eq "node$N 2M nr_hugepages" "$(cat $pool_file)" "$n"
  wait_healthy
  shown=$(nsenter --mount=/proc/$(holder)/ns/mnt cat $pool_file 2>&1)
  expect_eq "$B's hugepage view of node$N in its namespace (view hugepages)" "$shown" "$n"
  node_pool() { [ "$(to_bytes "$(api /api/v1/nodes/$(node_name $B) '.status.capacity["hugepages-2Mi"]')")" = $want ]; }
  wait_until 180 "Node $(node_name $B) capacity hugepages-2Mi = $n pages" node_pool
  expect_eq "Node $(node_name $B) allocatable hugepages-2Mi (bytes)" \
    "$(to_bytes "$(api /api/v1/nodes/$(node_name $B) '.status.allocatable["hugepages-2Mi"]')")" $want
  expect_eq "pod pinned-$B's container ($B's pool of $n pages)" "$(container_pid $B pinned-$B)" "$pinned"
}
repool $((POOL + 8))
repool $POOL
cp $STATE/config-before-repool.toml $CONFIG
expect_hugepages
finish
