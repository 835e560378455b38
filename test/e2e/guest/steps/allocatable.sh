# 3. Each Node's status.allocatable, read from the API server, is the
# partition's share in the plan: cpu = its CPUs, memory = Σ over its nodes
# of (MemTotal − hugepages − the kubelet's reservation there), and every
# hugepage size exactly the partition's own pages (each kubelet is shown
# only its partition's pools), capacity too; ephemeral-storage its share
# of the filesystem the kubelets' root dirs share, and its pods' pids.max
# its share of the pid space.
. /e2e/guest/lib.sh
requires apply
plan=$(numa-partition --output json plan 2>/dev/null) || die "numa-partition plan failed"
shown_partition=0
# The host's online CPUs (nproc counts this step's own affinity only).
host_cpus=$(expand_cpus "$(cat /sys/devices/system/cpu/online)" | tr , '\n' | wc -l)
for p in $PARTITIONS; do
  n=$(node_name $p)
  share=$(jq -r --arg p $p '.partitions[] | select(.name==$p) |
    "\(.cpus | split(",") | map(if test("-") then (split("-") | (.[1]|tonumber) - (.[0]|tonumber) + 1) else 1 end) | add) " +
    "\([.memory[] | .totalBytes - .reservedBytes - ([.hugepages[] | .pageSize * .count] | add // 0)] | add)"' <<<"$plan")
  read -r want_cpu want_mem <<<"$share"
  got=$(api_get /api/v1/nodes/$n) || { fail "cannot read Node $n"; continue; }
  got_cpu=$(jq -r .status.allocatable.cpu <<<"$got")
  got_mem=$(jq -r .status.allocatable.memory <<<"$got")
  expect_eq "Node $n allocatable cpu" "$got_cpu" "$want_cpu"
  expect_eq "Node $n allocatable memory (bytes)" "$(to_bytes "$got_mem")" "$want_mem"
  for size in 2Mi 1Gi; do
    want_huge=$(jq -r --arg p $p --argjson ps $(to_bytes $size) '.partitions[] | select(.name==$p) |
      [.memory[].hugepages[] | select(.pageSize==$ps) | .pageSize * .count] | add // 0' <<<"$plan")
    for field in capacity allocatable; do
      expect_eq "Node $n $field hugepages-$size (bytes)" "$(to_bytes "$(jq -r --arg r hugepages-$size ".status.$field[\$r]" <<<"$got")")" "$want_huge"
    done
  done
  want_es=$(jq -r --arg p $p '.partitions[] | select(.name==$p) | .ephemeralStorage.shareBytes' <<<"$plan")
  expect_eq "Node $n allocatable ephemeral-storage (bytes)" "$(to_bytes "$(jq -r '.status.allocatable["ephemeral-storage"]' <<<"$got")")" "$want_es"
  expect_eq "Node $n capacity ephemeral-storage: the shared filesystem (bytes)" \
    "$(to_bytes "$(jq -r '.status.capacity["ephemeral-storage"]' <<<"$got")")" "$(( $(stat -f -c '%S * %b' $KUBELETS_FS) ))"
  want_pids=$(jq -r --arg p $p '.partitions[] | select(.name==$p) | .pids.share' <<<"$plan")
  pids_max=$(cat $(find /sys/fs/cgroup -maxdepth 4 -path "*/$p.slice/$p-kubepods.slice/pids.max" | head -1) 2>/dev/null)
  expect_eq "partition $p pods' pids.max (kubelet's allocatable pid)" "$pids_max" "$want_pids"
  # `plan` says before apply what each Node will publish: the same figures.
  for field in capacity allocatable; do
    for r in cpu memory hugepages-2Mi hugepages-1Gi ephemeral-storage; do
      promised=$(jq -r --arg p $p --arg f $field --arg r $r '.nodeResources[] | select(.partition==$p) | .[$f][$r]' <<<"$plan")
      published=$(jq -r --arg f $field --arg r $r '.status[$f][$r]' <<<"$got")
      if [ $r = cpu ]; then
        expect_eq "Node $n $field $r as plan promised" "$published" "$promised"
      else
        expect_eq "Node $n $field $r as plan promised (bytes)" "$(to_bytes "$published")" "$(to_bytes "$promised")"
      fi
    done
  done
  # Shown its partition (kubeletgen's machine.go: its own containerd and
  # the nodes' hugepage sizes known), a Node's capacity
  # is the partition's machine: the CPUs its NUMA nodes list and their
  # MemTotal, not the host's. Otherwise the whole machine's, and plan
  # says why.
  whole=$(jq -r --arg p $p '.nodeResources[] | select(.partition==$p) | .wholeMachine // ""' <<<"$plan")
  if [ -z "$whole" ]; then
    shown_partition=$((shown_partition + 1))
    # Its CPUs, the host's on its nodes, and the host's it is shown
    # there when its static CPU Manager has none of them to reserve
    # (plan's shownHostCPUs, which its kubelet reserves).
    shown_host=$(jq -r --arg p $p '.nodeResources[] | select(.partition==$p) | .shownHostCPUs // ""' <<<"$plan")
    want_cap_cpu=$(jq -r --arg p $p --arg shown "$shown_host" '.partitions[] | select(.name==$p) | [.cpus, .hostReservedCPUs, $shown] | map(select(. != "" and . != null) | split(",")[] | if test("-") then (split("-") | (.[1]|tonumber) - (.[0]|tonumber) + 1) else 1 end) | add' <<<"$plan")
    if [ -n "$shown_host" ]; then
      echo "  Node $n is shown its partition with the host's CPUs $shown_host on its node"
      expect_eq "Node $n's kubelet reserves the host's CPUs it is shown (reservedSystemCPUs)" \
        "$(api "/api/v1/nodes/$n/proxy/configz" .kubeletconfig.reservedSystemCPUs)" "$shown_host"
    fi
    want_cap_mem=$(jq -r --arg p $p '.partitions[] | select(.name==$p) | [.memory[].totalBytes] | add' <<<"$plan")
    expect_eq "Node $n capacity cpu: its nodes' CPUs, not the host's $host_cpus" "$(jq -r .status.capacity.cpu <<<"$got")" "$want_cap_cpu"
    expect_eq "Node $n capacity memory: its nodes' MemTotal (bytes)" "$(to_bytes "$(jq -r .status.capacity.memory <<<"$got")")" "$want_cap_mem"
  else
    echo "  Node $n is shown the whole machine: $whole"
    expect_eq "Node $n capacity cpu: the host's" "$(jq -r .status.capacity.cpu <<<"$got")" "$host_cpus"
  fi
  echo "  Node $n capacity/allocatable, plan's hugepages for $p:"
  jq -r '.status | "    capacity    \(.capacity | to_entries | map("\(.key)=\(.value)") | join(" "))",
                   "    allocatable \(.allocatable | to_entries | map("\(.key)=\(.value)") | join(" "))"' <<<"$got"
  jq -r --arg p $p '.partitions[] | select(.name==$p) | "    plan        " +
    ([.memory[] | .node as $n | .hugepages[] | "\(.count)x\(.pageSize/1048576)Mi@node\($n)"] | join(" "))' <<<"$plan"
done
# The Nodes never promise more than the filesystem has.
total=$(jq '[.partitions[].ephemeralStorage.shareBytes] | add' <<<"$plan")
cap=$(( $(stat -f -c '%S * %b' $KUBELETS_FS) ))
evict=$(jq '.partitions[0].ephemeralStorage.evictionBytes' <<<"$plan")
[ "$total" -le $((cap - evict)) ] && ok "the Nodes' ephemeral-storage ($total) fits the filesystem less the eviction threshold ($((cap - evict)))" \
  || fail "the Nodes promise $total bytes of ephemeral-storage on a $cap-byte filesystem"
# Every partition of the e2e's configs has its own containerd and a plan
# with the nodes' hugepage sizes: each is shown its partition, on either
# cgroup version (boot v1's node1, a static CPU Manager with no host CPU
# on its node, with the host's CPU 0 there).
n_partitions=$(wc -w <<<"$PARTITIONS")
expect_eq "Nodes shown their partition on cgroup $E2E_CGROUP" "$shown_partition" "$n_partitions"
finish
