# 7. A config change that moves kubelet's memory reservations: the real
# kubelet refuses to start on a memory_manager_state written under other
# settings, so apply restarts it on fresh state, and while pods still hold
# pinned memory in that state it refuses and says to drain first.
# kube_reserved_memory 64Mi -> 96Mi changes every kubelet-mode partition's
# reservedMemory (nri-mode kubelets run no Memory Manager: theirs is only
# restarted for the new config).
. /e2e/guest/lib.sh
requires placement
kubelet_parts=""
for p in $PARTITIONS; do [ "${ALLOC_MODE[$p]}" = kubelet ] && kubelet_parts="$kubelet_parts $p"; done
pods_of() { k -n $NS get pods -o json | jq -r --arg n "$(node_name $1)" '.items[] | select(.spec.nodeName==$n) | .metadata.name'; }
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

# Drained: the pods go and kubelet cleans them up (their manager entries
# stay until the memory manager's next admission; apply counts only pods
# kubelet still has a directory for), then apply goes ahead.
for p in $kubelet_parts; do
  for pod in $(pods_of $p); do run k -n $NS delete pod $pod --wait=true --timeout=90s >/dev/null || fail "deleting $pod"; done
  drained() {
    local uid
    for uid in $(jq -r '.entries // {} | keys[]' "$(kubelet_root $1)/memory_manager_state" "$(kubelet_root $1)/cpu_manager_state" 2>/dev/null); do
      [ -d "$(kubelet_root $1)/pods/$uid" ] && return 1
    done
    return 0
  }
  wait_until 120 "kubelet-$p has cleaned up the pods its manager state names" drained $p
done
out=$(numa-partition apply 2>&1); rc=$?
echo "$out" | grep -E 'kubelet-state|stop kubelet|start kubelet' | head -12
expect_eq "apply after the drain exits" "$rc" 0
for p in $kubelet_parts; do
  grep -q "kubelet-state kubelet-$p.service: move .*memory_manager_state aside" <<<"$out" \
    && ok "kubelet-$p's stale state moved aside" || fail "no kubelet-state step moving kubelet-$p's state"
  [ -e "$(kubelet_root $p)/memory_manager_state.numa-partition-stale" ] && ok "the old memory_manager_state kept aside" || fail "no memory_manager_state.numa-partition-stale"
done
wait_healthy
for p in $kubelet_parts; do
  # The fresh state is the new reservation's: node's systemReserved grew by 32Mi.
  # (kubelet writes it once its Memory Manager has started, after healthz).
  reserved() { jq -r --arg n "${MEMS[$1]%%-*}" '.machineState[$n].memoryMap.memory.systemReserved' "$(kubelet_root $1)/memory_manager_state" 2>&1; }
  want=$(( (96 + 64 + 32) << 20 ))
  fresh() { [ "$(reserved $1)" = "$want" ]; }
  wait_until 60 "kubelet-$p's fresh memory_manager_state reserves $want bytes on node ${MEMS[$p]%%-*} (was $(( (64 + 64 + 32) << 20 )))" fresh $p \
    || echo "  memory_manager_state: $(reserved $p)"
  ready() { node_ready "$(node_name $1)"; }
  wait_until 120 "Node $(node_name $p) Ready after the restart on fresh state" ready $p
done
out=$(numa-partition apply 2>&1) || fail "re-apply failed: $out"
grep -q "kubelet-state" <<<"$out" && fail "re-apply touched kubelet state again" || ok "re-apply leaves the kubelets' state alone"
finish
