# 4. `status` reports healthy with the right effective cpusets.
. /e2e/guest/lib.sh
requires apply
out=$(numa-partition --output json status 2>$STATE/status.err)
rc=$?
echo "$out"; cat $STATE/status.err
[ $rc = 0 ] || fail "numa-partition status exited $rc, want 0 (healthy); problems: $(jq -c .problems <<<"$out" 2>/dev/null)"
facts=$(jq -r '
  "health \(.health)", "problems \(.problems|length)",
  "cgroupMode \(.cgroupMode)", "reserved \(.host.reservedCPUs)", "inForce \(.host.reservedCPUsInForce)",
  (.partitions[] | "\(.name) \(.effectiveCPUs) \(.effectiveMems) kubelet=\(.kubelet.ok) allocator=\(.allocator.ok)"),
  (.partitions[] | "node-\(.name) \(.node.name) ready=\(.node.ready) kubeconfig=\(.node.kubeconfig) cpu=\(.node.allocatable.cpu)")
' <<<"$out") || die "status --output json is not the documented JSON: $(head -c 300 <<<"$out")"
q() { awk -v k="$1" '$1==k{sub(/^[^ ]* /,""); print}' <<<"$facts"; }
expect_eq "status JSON's apiVersion and kind" "$(jq -r '"\(.apiVersion) \(.kind)"' <<<"$out")" "numa-partition.io/v1alpha1 Status"
expect_eq "health" "$(q health)" healthy
expect_eq "number of problems" "$(q problems)" 0
# systemd.unified_cgroup_hierarchy=0 gives systemd 252's hybrid layout.
expect_eq "cgroupMode" "$(q cgroupMode)" "$([ "$E2E_CGROUP" = v2 ] && echo unified || echo hybrid)"
expect_eq "host reservedCPUs" "$(q reserved)" $HOST_CPUS
expect_eq "host reservedCPUsInForce" "$(q inForce)" $HOST_CPUS
for p in $PARTITIONS; do
  expect_eq "$p (effective CPUs, mems, probes)" "$(q $p)" "${SLICE_CPUS[$p]} ${MEMS[$p]} kubelet=true allocator=true"
  # The Node as the API server has it, read with the partition's own
  # kubelet credentials (the Node authorizer lets a kubelet read its Node).
  expect_eq "$p Node (status, from the API server)" "$(q node-$p)" \
    "$(node_name $p) ready=true kubeconfig=/etc/kubernetes/kubelet-$p.conf cpu=${POD_CPU_COUNT[$p]}"
done
# Each partition's allocator writes the NumaPartitionDrifted condition on
# its Node with its kubelet's identity, at start and every minute
# (#40): False, AsPlanned, on a host as applied.
drifted() { api "/api/v1/nodes/$(node_name $1)" '.status.conditions[]? | select(.type == "NumaPartitionDrifted") | "\(.status) \(.reason)"'; }
for p in $PARTITIONS; do
  as_planned() { [ "$(drifted $p)" = "False AsPlanned" ]; }
  wait_until 150 "Node $(node_name $p) has condition NumaPartitionDrifted False (AsPlanned), from its allocator" as_planned \
    || { echo "  condition: '$(drifted $p)'"; journal_tail numa-allocator@$p.service 15; }
done
# Each partition's versions as its Node reports them (a canary's would
# differ): the binaries the VM runs.
# (containerd's CRI reports its version without the "v" its --version prints.)
kver=$(kubelet --version | awk '{print $2}') cver=$(containerd --version | awk '{print $3}')
cver=${cver#v}
for p in $PARTITIONS; do
  expect_eq "$p: kubelet and runtime versions (status, from its Node)" \
    "$(jq -r --arg p $p '.partitions[] | select(.name==$p) | "\(.node.kubeletVersion) \(.node.containerRuntimeVersion)"' <<<"$out")" "$kver containerd://$cver"
done
# On cgroup v2 a kubelet does not count the host's memory on its nodes:
# status measures it and warns where it is more than the host's
# reservation there (node0, with the host's CPU and the VM's in-memory
# root file system, is far past its reservation).
if [ "$E2E_CGROUP" = v2 ]; then
  # What each partition's own services cost (#41): their cgroups' CPU
  # time and working set, as status reads them.
  for p in $PARTITIONS; do
    for u in kubelet-$p containerd-$p; do
      ws=$(jq -r --arg p $p --arg u $u.service '.partitions[] | select(.name==$p) | .units[] | select(.name==$u) | .usage.memoryWorkingSetBytes // 0' <<<"$out")
      [ "${ws:-0}" -gt 0 ] && ok "$u: its own working set in status, $((ws >> 20)) MiB" || fail "$u: no usage in status: $(jq -c --arg u $u.service '.partitions[].units[] | select(.name==$u)' <<<"$out")"
    done
  done
  plan=$(numa-partition --output json plan 2>/dev/null)
  # The daemons together against the memory their kubelet reserves for
  # them (kube_reserved_memory): the sum of the units' working sets, and a
  # warning exactly when they use more.
  for p in $PARTITIONS; do
    d=$(jq -c --arg p $p '.partitions[] | select(.name==$p) | .daemons // {}' <<<"$out")
    sum=$(jq --arg p $p '[.partitions[] | select(.name==$p) | .units[].usage.memoryWorkingSetBytes // 0] | add' <<<"$out")
    want=$(jq -r --arg p $p '.partitions[] | select(.name==$p) | .kubelet.kubeReservedMemory' <<<"$plan")
    expect_eq "$p: its daemons' working set in status (the units' sum), against kube_reserved_memory" \
      "$(jq -r '"\(.memoryWorkingSetBytes) \(.kubeReservedMemoryBytes)"' <<<"$d")" "$sum $want"
    # Their own memory (anon: heap, stacks), part of the working set; the
    # rest is files they were charged for (here the images' layers on
    # the VM's in-memory root).
    anon=$(jq --arg p $p '[.partitions[] | select(.name==$p) | .units[].usage.memoryAnonBytes // 0] | add' <<<"$out")
    expect_eq "$p: its daemons' own (anon) memory in status, the units' sum" "$(jq -r '.memoryAnonBytes' <<<"$d")" "$anon"
    [ "$anon" -gt 0 ] && [ "$anon" -le "$sum" ] && ok "$p: its daemons hold $((anon >> 20)) MiB themselves of their $((sum >> 20)) MiB working set" \
      || fail "$p: daemons' anon $anon not within (0, working set $sum]"
    used=$(jq -r '.memoryWorkingSetBytes // 0' <<<"$d")
    warned=$(jq --arg p $p '[.warnings[]? | select(startswith("partition \($p): its kubelet, containerd"))] | length' <<<"$out")
    expect_eq "$p: its daemons use $((used >> 20)) MiB of its $((want >> 20)) MiB kube_reserved_memory: warned (1) or not (0)" "$warned" $([ "$used" -gt "$want" ] && echo 1 || echo 0)
  done
  for p in $PARTITIONS; do
    host=$(jq -r --arg p $p '.partitions[] | select(.name==$p) | .hostMemoryBytes // "none"' <<<"$out")
    [[ $host =~ ^[0-9]+$ ]] && ok "$p: the host's memory on its nodes, measured: $((host >> 20)) MiB" \
      || { fail "$p: no hostMemoryBytes in status on cgroup v2: $host"; continue; }
    reserved=$(jq -r --arg p $p '.partitions[] | select(.name==$p) | .kubelet.systemReservedMemory' <<<"$plan")
    warned=$(jq --arg p $p '[.warnings[]? | select(startswith("partition \($p): the host holds"))] | length' <<<"$out")
    expect_eq "$p: warned that the host holds more than its $((reserved >> 20)) MiB there (1) or not (0)" "$warned" $([ $host -gt $reserved ] && echo 1 || echo 0)
  done
fi
# For cost.sh (the host's price of a partition, #41): status as read
# here, and each Node's summary (its pods' usage, as kubelet reports it).
echo "$out" > /mnt/share/status.json
for p in $PARTITIONS; do
  api_get "/api/v1/nodes/$(node_name $p)/proxy/stats/summary?only_cpu_and_memory=true" > /mnt/share/summary-$p.json \
    || echo "  (no summary of $(node_name $p) for cost.sh)"
done
# With an admin kubeconfig given, the same answer.
adm=$(numa-partition --output json status --kubeconfig $KUBECONFIG 2>&1 | jq -r '[.partitions[] | "\(.node.name)=\(.node.ready)"] | join(" ")')
expect_eq "status --kubeconfig (admin)" "$adm" "$(node_name node0)=true $(node_name node1)=true"
numa-partition status > $STATE/status.txt 2>&1 && ok "table status exit 0" || fail "numa-partition status (table) failed: $(tail -3 $STATE/status.txt)"
cat $STATE/status.txt
finish
