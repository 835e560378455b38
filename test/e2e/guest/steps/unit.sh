# 6 (n4). Pods placed as one unit: the nri partition's allocator reads
# each from the API server with its kubelet's own credentials and places
# it at once: a virt-launcher pod (one VM, in any scope), and in this
# partition's pod scope any Guaranteed pod. A filler pod takes two fifths
# of the first node; each pod's two containers ask two fifths each. Placed
# one by one (container scope) the first would still fit the first node
# and the second would go to the other; as one unit (four fifths) both go
# to the second node. Deleting the pod releases it.
. /e2e/guest/lib.sh
requires fill
plan=$(numa-partition plan -o json 2>/dev/null) || die "numa-partition plan failed"
p=
for q in $PARTITIONS; do [ "${ALLOC_MODE[$q]}" = nri ] && p=$q; done
[ -n "$p" ] || die "no partition in nri mode"
for pod in fill-$p-a fill-$p-b; do k -n $NS delete pod $pod --wait=true --timeout=90s >/dev/null 2>&1; done
read -r first second <<<"$(jq -r --arg p $p '.partitions[] | select(.name==$p) | [.memory[].node] | map(tostring) | join(" ")' <<<"$plan")"
free=$(jq -r --arg p $p '.partitions[] | select(.name==$p) | .memory[0] | .totalBytes - .reservedBytes' <<<"$plan")
mib=$(( free * 2 / 5 >> 20 ))
res="{requests: {cpu: 100m, memory: ${mib}Mi}, limits: {cpu: 100m, memory: ${mib}Mi}}"
echo "  partition $p: NUMA nodes $first and $second; ${mib}Mi per container, node $first has $((free >> 20))Mi free"

pod_yaml filler-$p $p "$res" | run k apply -f - || fail "creating filler-$p"
wait_until $POD_START_S "pod filler-$p Running" pod_running filler-$p || k -n $NS describe pod filler-$p 2>&1 | tail -15
expect_eq "pod filler-$p Mems_allowed_list" "$(status_field "$(container_pid $p filler-$p)" Mems_allowed_list)" "$first"

# two_containers NAME LABELS: a pod of two containers of two fifths each;
# placed as one unit, both run on the second node, and its allocation is
# one, under the pod's UID, released with the pod.
two_containers() {
  local pod=$1 labels=$2 uid i id name pid got
  cat <<YAML | run k apply -f - || { fail "creating $pod"; return; }
apiVersion: v1
kind: Pod
metadata:
  name: $pod
  namespace: $NS
  labels: $labels
spec:
  nodeSelector: {numa-type: ${COLOR[$p]}, e2e.numa-partition.io/boot: $BOOT}
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 2
  containers:
  - {name: compute, image: e2e.local/workload:1, imagePullPolicy: Never, resources: $res}
  - {name: guest-console-log, image: e2e.local/workload:1, imagePullPolicy: Never, resources: $res}
YAML
  if wait_until $POD_START_S "pod $pod Running" pod_running $pod; then
    for i in 0 1; do
      id=$(api "$(pod_path $pod)" ".status.containerStatuses[$i].containerID")
      name=$(api "$(pod_path $pod)" ".status.containerStatuses[$i].name")
      pid=$(ctr --address "$(socket_of $p)" -n k8s.io tasks ls 2>/dev/null | awk -v id="${id#containerd://}" '$1==id{print $2}')
      expect_eq "$pod container $name Mems_allowed_list (the unit's node)" "$(status_field "$pid" Mems_allowed_list)" "$second"
    done
    uid=$(api "$(pod_path $pod)" .metadata.uid)
    got=$(numa-partition allocations -p $p -o json 2>/dev/null | jq -r --arg u "$uid" \
      '.items[0].allocations[] | select(.podUID==$u) | [.containers[] | "\(.name):\(.numaNodes)"] | sort | join(" ")')
    expect_eq "allocator of $p: one allocation for $pod, both containers on node $second" "$got" "compute:$second guest-console-log:$second"
  else
    k -n $NS describe pod $pod 2>&1 | tail -15
  fi
  run k -n $NS delete pod $pod --wait=true --timeout=90s || fail "deleting $pod"
  released() { [ -z "$(numa-partition allocations -p $p -o json 2>/dev/null | jq -r --arg u "$uid" '.items[0].allocations[] | select(.podUID==$u) | .podUID')" ]; }
  wait_until 60 "$pod's allocation is released with its sandbox" released
}

# A virt-launcher pod is one VM: one unit in any scope.
two_containers launcher-$p '{kubevirt.io: virt-launcher}'
# Any Guaranteed pod is one unit in this partition's pod scope.
two_containers pair-$p '{}'
grep -q "pod placed as one unit" <<<"$(journalctl -b --no-pager -o cat -u numa-allocator@$p.service)" \
  && ok "the allocator logged pods placed as one unit" || fail "no 'pod placed as one unit' in the allocator's journal"
k -n $NS delete pod filler-$p --wait=false >/dev/null 2>&1
finish
