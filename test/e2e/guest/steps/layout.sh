# A change of the partition layout itself on a live host (#25), the
# operation an operator fears most, through `apply --drain` and the real
# API server's Eviction API. Boot n4's two partitions, node0 (NUMA nodes
# 0-1, kubelet mode) and node2 (nodes 2-3, nri mode), are merged into one
# partition node0 (nodes 0-3), then split back:
# - merge: node0's CPUs change (its kubelet restarts on fresh manager
#   state) and node2 goes, so both Nodes are cordoned and drained; node2's
#   units go and its Node object is deleted; node0 comes back Ready with
#   every pod CPU of the host and is uncordoned. A Deployment whose budget
#   allows no disruption holds the first drain: apply is killed with
#   SIGKILL while the API server keeps refusing its evictions. The killed
#   apply changed no unit, status names the Nodes it left cordoned, and
#   the next apply (budget gone) adopts them and finishes.
# - split back: node0 shrinks again (drained, restarted), node2 is new and
#   joins by TLS bootstrap as a fresh Node; the Deployment's replicas run
#   again.
. /e2e/guest/lib.sh
requires apply
[ "$E2E_MODE" = n4 ] || die "the layout step needs boot n4's 4 NUMA nodes"
DRAIN="--drain --force --delete-emptydir-data --kubeconfig $KUBECONFIG"
RECORD=/var/lib/numa-partition/applied.json
N0=$(node_name node0) N2=$(node_name node2)
unschedulable() { api "/api/v1/nodes/$1" '.spec.unschedulable // false'; }
alloc_cpu() { api "/api/v1/nodes/$1" '.status.allocatable.cpu'; }
node_gone() { ! api_get "/api/v1/nodes/$1" >/dev/null 2>&1; }
ready_on() { [ "$(api "/apis/apps/v1/namespaces/$NS/deployments/e2e-layout" '.status.readyReplicas // 0')" = 2 ]; }
record_cordoned() { jq -r '[.cordoned[]?.node] | sort | join(" ")' $RECORD 2>/dev/null; }

# Earlier steps' pods go first: the drains below evict only what this
# step made, so their times are this step's.
k -n $NS delete pods --all --wait=true --timeout=180s >/dev/null 2>&1
cat <<YAML | run k apply -f - >/dev/null || die "creating Deployment e2e-layout and its budget"
apiVersion: apps/v1
kind: Deployment
metadata: {name: e2e-layout, namespace: $NS}
spec:
  replicas: 2
  selector: {matchLabels: {app: e2e-layout}}
  template:
    metadata: {labels: {app: e2e-layout}}
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 2
      nodeSelector: {e2e.numa-partition.io/boot: $BOOT}
      containers:
      - {name: work, image: e2e.local/workload:1, imagePullPolicy: Never}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: e2e-layout, namespace: $NS}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: e2e-layout}}
YAML
wait_until $POD_START_S "Deployment e2e-layout has 2 ready replicas" ready_on || k -n $NS get pods -o wide
holds() { [ "$(api /apis/policy/v1/namespaces/$NS/poddisruptionbudgets/e2e-layout '"\(.status.observedGeneration // 0) \(.status.disruptionsAllowed // -1)"')" = "1 0" ]; }
wait_until 120 "PodDisruptionBudget e2e-layout observed, allowing no disruption" holds

# The merged layout: one partition of every node, in kubelet mode.
cp $CONFIG $STATE/config-before-layout.toml
awk '/^\[\[partition\]\]/{exit} $0=="mode = \"socket\""{print "mode = \"custom\""; print "groups = [[0, 1, 2, 3]]"; next} {print}' \
  $STATE/config-before-layout.toml > $CONFIG
grep -q '^groups = \[\[0, 1, 2, 3\]\]$' $CONFIG || die "could not write the merged layout into $CONFIG"
run numa-partition plan 2>&1 | head -12

# The dry run says what the drain will do, per Node, and changes nothing.
out=$(numa-partition apply --dry-run $DRAIN 2>&1); rc=$?
echo "$out" | grep -E "Node|cordon|evict|delete" | head -8
expect_eq "apply --dry-run --drain of the merge exits" "$rc" 0
grep -qF "delete Node $N2" <<<"$out" && ok "the dry run deletes Node $N2 (partition node2 goes)" || fail "the dry run does not say it deletes Node $N2"
grep -q "cordon" <<<"$out" && ok "the dry run cordons" || fail "the dry run does not say it cordons"
expect_eq "Node $N0 untouched by the dry run" "$(unschedulable $N0)" false

# Killed while the budget holds the drain.
before=$(main_pids)
setsid numa-partition apply $DRAIN --drain-timeout 15m > $STATE/layout-killed.log 2>&1 &
victim=$!
# apply records both Nodes before it cordons the first, then drains them
# one after the other: the budget holds whichever has a replica first.
cordoned() { [ -n "$(record_cordoned)" ] && { [ "$(unschedulable $N0)" = true ] || [ "$(unschedulable $N2)" = true ]; }; }
wait_until 300 "apply --drain recorded the Nodes and cordoned one" cordoned || tail -5 $STATE/layout-killed.log
refused() { grep -q "PodDisruptionBudget $NS/e2e-layout holds back" $STATE/layout-killed.log; }
wait_until 120 "the budget e2e-layout refuses apply's evictions" refused || tail -5 $STATE/layout-killed.log
kill -9 $victim; wait $victim; rc=$?
expect_eq "apply killed with SIGKILL mid-drain (exit status)" "$rc" 137
tail -3 $STATE/layout-killed.log
expect_eq "services after the killed drain (unchanged)" "$(main_pids)" "$before"
left_cordoned=$(for n in $N0 $N2; do [ "$(unschedulable $n)" = true ] && echo $n; done | tr '\n' ' ')
[ -n "$left_cordoned" ] && ok "the killed drain left $left_cordoned cordoned" || fail "no Node cordoned after the killed drain"
expect_eq "Nodes the pending record lists as cordoned" "$(record_cordoned)" "$(printf '%s\n' $N0 $N2 | sort | tr '\n' ' ' | sed 's/ $//')"
st=$(numa-partition status -o json 2>/dev/null)
for n in $N0 $N2; do
  jq -e --arg n "$n" '.problems[] | select(contains("interrupted drain left Node " + $n + " cordoned"))' <<<"$st" >/dev/null \
    && ok "status names Node $n, left cordoned by the killed drain" || fail "status does not name Node $n as left cordoned: $(jq -c .problems <<<"$st")"
done
expect_eq "e2e-layout's ready replicas after the killed drain" "$(api /apis/apps/v1/namespaces/$NS/deployments/e2e-layout '.status.readyReplicas // 0')" 2

# The budget gone, the next apply adopts the cordoned Nodes and finishes.
run k -n $NS delete pdb e2e-layout >/dev/null || fail "deleting the budget e2e-layout"
t0=$SECONDS
out=$(numa-partition apply $DRAIN 2>&1); rc=$?
echo "$out" | grep -E "partition|Node|delete|waves" | head -12
expect_eq "apply --drain of the merge exits" "$rc" 0
echo "  the merge took $((SECONDS - t0)) s"
wait_until 60 "Node $N2 deleted (its partition went)" node_gone $N2
for u in kubelet-node2.service containerd-node2.service numa-allocator@node2.service node2.slice; do
  [ -e /etc/systemd/system/$u ] && fail "$u is still installed" || ok "$u removed"
done
expect_eq "kubelet-node2 after the merge" "$(unit_prop kubelet-node2.service ActiveState)" inactive
wait_until 300 "Node $N0 Ready after the merge" node_ready $N0
expect_eq "Node $N0 schedulable after the merge" "$(unschedulable $N0)" false
expect_eq "Node $N0's allocatable cpu (CPUs 1-3)" "$(alloc_cpu $N0)" 3
expect_eq "the record after the merge: pending, cordoned" "$(jq -r '"\(.pending // false) \(.cordoned // [] | length)"' $RECORD)" "false 0"
wait_until $POD_START_S "e2e-layout's 2 replicas ready again, on $N0" ready_on
expect_eq "e2e-layout's pods on $N0" "$(pods_on $NS app=e2e-layout $N0 | wc -l)" 2
out=$(numa-partition status 2>&1) && ok "status healthy after the merge" || fail "status after the merge: $(tail -4 <<<"$out" | tr '\n' ' ')"

# Split back: node0 shrinks (drained, restarted on fresh state), node2 is
# a new partition that joins by TLS bootstrap.
cp $STATE/config-before-layout.toml $CONFIG
t0=$SECONDS
out=$(numa-partition apply $DRAIN 2>&1); rc=$?
echo "$out" | grep -E "partition|Node|waves" | head -12
expect_eq "apply --drain of the split exits" "$rc" 0
echo "  the split took $((SECONDS - t0)) s"
wait_until 600 "Node $N2 registered again and Ready" node_ready $N2
wait_until 300 "Node $N0 Ready after the split" node_ready $N0
for p in node0 node2; do
  expect_eq "Node $(node_name $p) schedulable after the split" "$(unschedulable $(node_name $p))" false
  expect_eq "Node $(node_name $p)'s allocatable cpu" "$(alloc_cpu $(node_name $p))" "${POD_CPU_COUNT[$p]}"
  for u in $(partition_units $p); do expect_eq "$u" "$(unit_prop $u ActiveState)" active; done
done
wait_healthy
wait_until $POD_START_S "e2e-layout's 2 replicas ready after the split" ready_on
out=$(numa-partition status 2>&1) && ok "status healthy after the split" || fail "status after the split: $(tail -4 <<<"$out" | tr '\n' ' ')"
run k -n $NS delete deployment/e2e-layout --wait=true --timeout=120s >/dev/null || fail "deleting Deployment e2e-layout"
finish
