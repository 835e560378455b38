# 7. A config change that moves kubelet's memory reservations: the real
# kubelet refuses to start on a memory_manager_state written under other
# settings, so apply restarts it on fresh state, and while pods still hold
# pinned memory in that state it refuses and says to drain first.
# kube_reserved_memory 64Mi -> 96Mi changes every kubelet-mode partition's
# reservedMemory (nri-mode kubelets run no Memory Manager: theirs is only
# restarted for the new config).
# Then `apply --drain` does the drain (#25), through the real API
# server's Eviction API: first against a PodDisruptionBudget that allows
# no disruption of one of the pods, which holds the drain until its
# timeout: apply fails, restarts nothing and uncordons the Node it
# cordoned; with the budget gone, it goes one Node at a time: cordons,
# evicts and waits for that Node's kubelet to let go of the pods' memory,
# restarts the kubelet on fresh state and uncordons the Node once it is
# Ready, then the next; a Deployment with a replica on each Node and a
# budget allowing one disruption keeps a ready replica throughout.
. /e2e/guest/lib.sh
requires placement
kubelet_parts=""
for p in $PARTITIONS; do [ "${ALLOC_MODE[$p]}" = kubelet ] && kubelet_parts="$kubelet_parts $p"; done
pods_of() { api_get /api/v1/namespaces/$NS/pods | jq -r --arg n "$(node_name $1)" '.items[] | select(.spec.nodeName==$n) | .metadata.name'; }
entries() { jq -r '.entries // {} | length' "$(kubelet_root $1)/$2" 2>/dev/null; }
for p in $kubelet_parts; do
  [ -n "$(pods_of $p)" ] || die "no pod runs on partition $p: nothing to drain"
  [ "$(entries $p memory_manager_state)" -gt 0 ] || die "kubelet-$p's memory_manager_state holds no pod: the refusal would not be tested"
done
before=$(main_pids)
sed -i 's/^kube_reserved_memory = "64Mi"$/kube_reserved_memory = "96Mi"/' $CONFIG
grep -q '^kube_reserved_memory = "96Mi"$' $CONFIG || die "the config has no kube_reserved_memory line to change"

# With pods pinned: refused, nothing changed.
out=$(numa-partition apply 2>&1); rc=$?
echo "$out" | tail -4
expect_eq "apply with pinned pods exits" "$rc" 2
for p in $kubelet_parts; do
  for want in "kubelet-$p.service: its CPU and Memory Manager settings change" "drain partition $p's Node" "--reset-kubelet-state"; do
    grep -qF -- "$want" <<<"$out" && ok "the refusal says '$want'" || fail "the refusal lacks '$want'"
  done
done
expect_eq "services after the refused apply (unchanged)" "$(main_pids)" "$before"


# The pods here have no controller: without --force the drain refuses
# them before it cordons anything, as kubectl drain does.
first=${kubelet_parts# }; first=${first%% *}
out=$(numa-partition apply --drain --delete-emptydir-data --kubeconfig $KUBECONFIG 2>&1); rc=$?
echo "$out" | tail -3
[ $rc != 0 ] && ok "apply --drain without --force exits $rc" || fail "apply --drain evicted pods no controller manages without --force"
named=""
for x in $(pods_of $first); do grep -qF "$NS/$x" <<<"$out" && named="$named $x"; done
grep -q -- "no controller manages.*--force evicts them" <<<"$out" && [ -n "$named" ] \
  && ok "the refusal names the pods no controller manages ($named) and --force" || fail "the refusal does not name the unmanaged pods and --force"
expect_eq "services after the refused drain (unchanged)" "$(main_pids)" "$before"
for p in $kubelet_parts; do
  expect_eq "Node $(node_name $p) never cordoned by the refused drain" "$(node_unschedulable $(node_name $p))" false
done

# A budget that lets none of its pods go holds the drain: refused after
# --drain-timeout, nothing restarted, the cordoned Node uncordoned.
held=$(pods_of $first | head -1)
run k -n $NS label pod $held e2e-hold=yes --overwrite >/dev/null || fail "labelling $held"
cat <<YAML | run k apply --validate=false -f - >/dev/null || fail "creating the PodDisruptionBudget"
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: e2e-hold, namespace: $NS}
spec:
  minAvailable: 1
  selector: {matchLabels: {e2e-hold: "yes"}}
YAML
budget_holds() { [ "$(api /apis/policy/v1/namespaces/$NS/poddisruptionbudgets/e2e-hold '"\(.status.observedGeneration // 0) \(.status.disruptionsAllowed // -1)"')" = "1 0" ]; }
wait_until 120 "PodDisruptionBudget e2e-hold observed, allowing no disruption of $held" budget_holds
t0=$SECONDS
out=$(numa-partition apply $DRAIN --drain-timeout 45s 2>&1); rc=$?
echo "$out" | tail -5
[ $rc != 0 ] && ok "apply --drain held by the budget exits $rc after $((SECONDS - t0)) s" || fail "apply --drain went through a budget that allows no disruption"
grep -q "e2e-hold" <<<"$out" && ok "the failure names the budget e2e-hold" || fail "the failure does not name the budget e2e-hold"
expect_eq "services after the held drain (unchanged)" "$(main_pids)" "$before"
api "$(pod_path $held)" .metadata.name >/dev/null && ok "pod $held, which the budget protects, still exists" || fail "pod $held is gone"
for p in $kubelet_parts; do
  expect_eq "Node $(node_name $p) schedulable again after the failed drain" "$(node_unschedulable $(node_name $p))" false
done
run k -n $NS delete pdb e2e-hold >/dev/null || fail "deleting the PodDisruptionBudget"

# A Deployment spread over the partitions, one replica per Node
# (anti-affinity), under a budget that allows one disruption: the rolling
# drain must keep one replica ready throughout. Draining both Nodes
# before either kubelet restarts (apply before #25's waves) deadlocked
# it: the first replica's replacement has no Node to go to.
nodes_json=$(for p in $kubelet_parts; do printf '"%s",' "$(node_name $p)"; done); nodes_json="[${nodes_json%,}]"
cat <<YAML | run k apply --validate=false -f - >/dev/null || fail "creating Deployment e2e-web and its budget"
apiVersion: apps/v1
kind: Deployment
metadata: {name: e2e-web, namespace: $NS}
spec:
  replicas: 2
  selector: {matchLabels: {app: e2e-web}}
  template:
    metadata: {labels: {app: e2e-web}}
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 2
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: $nodes_json}]}]
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {labelSelector: {matchLabels: {app: e2e-web}}, topologyKey: kubernetes.io/hostname}
      containers:
      - {name: work, image: e2e.local/workload:1, imagePullPolicy: Never}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: e2e-web, namespace: $NS}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: e2e-web}}
YAML
web_pods_of() { api_get "/api/v1/namespaces/$NS/pods?labelSelector=app%3De2e-web" | jq -r --arg n "$(node_name $1)" '.items[] | select(.spec.nodeName==$n and .metadata.deletionTimestamp==null) | .metadata.name'; }
web_spread() { [ "$(ready_replicas e2e-web)" = 2 ] && for p in $kubelet_parts; do [ -n "$(web_pods_of $p)" ] || return 1; done; }
web_budget() { [ "$(api /apis/policy/v1/namespaces/$NS/poddisruptionbudgets/e2e-web '.status.disruptionsAllowed // 0')" = 1 ]; }
wait_until 300 "Deployment e2e-web ready with a replica on each Node" web_spread || k -n $NS get pods -l app=e2e-web -o wide
wait_until 120 "PodDisruptionBudget e2e-web allows one disruption" web_budget

# Without the hold budget: drained through the Eviction API, one Node
# at a time, each restarted on fresh state and uncordoned once Ready
# before the next is cordoned; e2e-web's ready replicas are sampled
# meanwhile.
sample_ready e2e-web
t0=$SECONDS
out=$(numa-partition apply $DRAIN 2>&1); rc=$?
stop_sampling e2e-web
echo "$out" | grep -E 'partition .*Node|kubelet-state|stop kubelet|start kubelet|waves' | head -14
expect_eq "apply --drain exits" "$rc" 0
echo "  apply --drain took $((SECONDS - t0)) s"
waves=$(echo $kubelet_parts | sed 's/ /, then /g')
grep -qF "rolled out in $(echo $kubelet_parts | wc -w) waves, each drained, changed, Ready and uncordoned before the next: $waves" <<<"$out" \
  && ok "apply rolled out one Node at a time ($waves)" || fail "apply's output has no rolling line for $waves"
expect_ready_throughout e2e-web 5 throughout
for p in $kubelet_parts; do
  grep -E "partition $p .*drained in .* \([1-9][0-9]* evicted\).*uncordoned" <<<"$out" >/dev/null \
    && ok "partition $p's Node drained (pods evicted) and uncordoned by apply" || fail "apply's output has no drained-and-uncordoned line for partition $p"
  expect_eq "pods left on Node $(node_name $p) but e2e-web's" "$(comm -23 <(pods_of $p | sort) <(web_pods_of $p | sort) | tr '\n' ' ')" ""
  expect_eq "Node $(node_name $p) schedulable after apply --drain" "$(node_unschedulable $(node_name $p))" false
done
wait_until 300 "Deployment e2e-web ready again with a replica on each Node" web_spread
run k -n $NS delete deployment/e2e-web pdb/e2e-web --wait=true --timeout=120s >/dev/null || fail "deleting Deployment e2e-web"
for p in $kubelet_parts; do
  grep -q "kubelet-state kubelet-$p.service: move .*memory_manager_state aside" <<<"$out" \
    && ok "kubelet-$p's stale state moved aside" || fail "no kubelet-state step moving kubelet-$p's state"
  [ -e "$(kubelet_root $p)/memory_manager_state.numa-partition-stale" ] && ok "the old memory_manager_state kept aside" || fail "no memory_manager_state.numa-partition-stale"
done
wait_healthy
for p in $kubelet_parts; do
  # The fresh state is the new reservation's: node's systemReserved is the
  # plan's kube + system reserved + evictionHard (the partition's own
  # values, config/partitions.toml), 32Mi
  # more than before (kubelet writes it once its Memory Manager has
  # started, after healthz).
  reserved() { jq -r --arg n "${MEMS[$1]%%-*}" '.machineState[$n].memoryMap.memory.systemReserved' "$(kubelet_root $1)/memory_manager_state" 2>&1; }
  want=$(numa-partition --output json plan 2>/dev/null | jq -r --arg p $p \
    '.partitions[] | select(.name==$p) | .kubelet | .kubeReservedMemory + .systemReservedMemory + .evictionHardMemory')
  fresh() { [ "$(reserved $1)" = "$want" ]; }
  wait_until 60 "kubelet-$p's fresh memory_manager_state reserves $want bytes on node ${MEMS[$p]%%-*} (the plan's, was $((want - (32 << 20))))" fresh $p \
    || echo "  memory_manager_state: $(reserved $p)"
  ready() { node_ready "$(node_name $1)"; }
  wait_until 120 "Node $(node_name $p) Ready after the restart on fresh state" ready $p
done
out=$(numa-partition apply 2>&1) || fail "re-apply failed: $out"
grep -q "kubelet-state" <<<"$out" && fail "re-apply touched kubelet state again" || ok "re-apply leaves the kubelets' state alone"
finish
