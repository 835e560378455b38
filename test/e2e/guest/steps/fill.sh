# 5 (n4). Each partition spans two NUMA nodes. Guaranteed pods scheduled
# through the API server fill the partition's first node, and the next one
# lands on its second: in node0 kubelet's Memory Manager decides (its
# allocator's mirror agrees with memory_manager_state), in node2 the
# allocator decides through NRI and enforces cpuset.mems.
. /e2e/guest/lib.sh
requires apply
plan=$(numa-partition plan -o json 2>/dev/null) || die "numa-partition plan failed"
for p in $PARTITIONS; do
  read -r first second <<<"$(jq -r --arg p $p '.partitions[] | select(.name==$p) | [.memory[].node] | map(tostring) | join(" ")' <<<"$plan")"
  # Three fifths of the first node's free memory: one pod fits there, two do not.
  free=$(jq -r --arg p $p '.partitions[] | select(.name==$p) | .memory[0] | .totalBytes - .reservedBytes' <<<"$plan")
  mib=$(( free * 3 / 5 >> 20 ))
  echo "  partition $p: NUMA nodes $first and $second (${ALLOC_MODE[$p]} mode); pods of ${mib}Mi, node $first has $((free >> 20))Mi free"
  want=$first
  for pod in fill-$p-a fill-$p-b; do
    pod_yaml $pod $p "{requests: {cpu: 100m, memory: ${mib}Mi}, limits: {cpu: 100m, memory: ${mib}Mi}}" | run k apply -f - || fail "creating $pod"
    if ! wait_until $POD_START_S "pod $pod Running" pod_running $pod; then
      k -n $NS describe pod $pod 2>&1 | tail -15; continue
    fi
    pid=$(container_pid $p $pod)
    expect_eq "pod $pod Mems_allowed_list" "$(status_field $pid Mems_allowed_list)" "$want"
    uid=$(api "$(pod_path $pod)" .metadata.uid)
    expect_eq "allocator of $p: pod $pod (pinned nodes memory hugepages)" "$(allocation $p $uid)" "true $want $((mib << 20)) null"
    if [ "${ALLOC_MODE[$p]}" = kubelet ]; then
      mm=$(jq -r --arg u "$uid" '.entries[$u].work[] | select(.type=="memory") | .numaAffinity | map(tostring) | join(",")' $(kubelet_root $p)/memory_manager_state 2>&1)
      expect_eq "kubelet-$p memory_manager_state: pod $pod's node (the mirror agrees)" "$mm" "$want"
    else
      expect_eq "kubelet-$p memory manager off (nri mode)" "$(jq -r .policyName $(kubelet_root $p)/memory_manager_state 2>&1)" None
    fi
    want=$second
  done
done
finish
