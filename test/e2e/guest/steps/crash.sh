# A partition survives the crash of any of its daemons: containerd,
# the allocator and kubelet of each partition are killed with SIGKILL, one
# at a time, while a pod runs there. After each kill, within RECOVER_S:
# all three services are active again (the killed one with a new MainPID:
# Restart=always; kubelet restarted with its containerd through
# Requires=/PartOf=, never left stopped as BindsTo= left it), kubelet
# answers /healthz and the Node is Ready. The running pod's container
# survives every kill in its shim, in both allocator modes: the same PID
# after each kill and once more at the end, and kubelet never restarted it
# (restartCount 0). Before the partition's mount namespace had a holder of
# its own (mountns-<p>.service), a restarted containerd lost its pods'
# network namespace mounts and kubelet re-created every pod
# (SandboxChanged). In kubelet mode the pod is Guaranteed on every pod CPU
# of the partition (the state kubelet 1.37 cannot restart from without
# the unit's kubelet-state repair). At the end a new pod starts in each
# partition: the chain kubelet → containerd → NRI → allocator works after
# the crashes, not only the units' states. Boots v1 (node0 in kubelet
# mode, node1 in nri mode, flannel and kube-proxy running on both) and n4
# (node0 in kubelet mode, node2 in nri mode) run it.
. /e2e/guest/lib.sh
requires apply
# The bound this step promises. The sandbox (real systemd 252, stand-in
# daemons) recovers in 10-30 s; under TCG kubelet's restart alone takes
# 30-90 s, and the Node's Ready condition follows its first status update.
RECOVER_S=300

# In a kubelet-mode partition the survivor is Guaranteed and takes every
# pod CPU: kubelet then checkpoints an empty shared pool, which kubelet
# 1.37 refuses at its next start ("default cpuset cannot be empty",
# kubernetes#141196; before the unit's `kubelet-state repair` it crash-
# looped for good after the first kill). Earlier steps' pods go first, to
# leave the CPUs free.
k -n $NS delete pods --all --wait=true --timeout=180s >/dev/null 2>&1
for p in $PARTITIONS; do
  res='{}'
  if [ "${ALLOC_MODE[$p]}" = kubelet ]; then
    n=${POD_CPU_COUNT[$p]}
    res="{requests: {cpu: \"$n\", memory: 64Mi}, limits: {cpu: \"$n\", memory: 64Mi}}"
  fi
  pod_yaml survivor-$p $p "$res" | run k apply -f - >/dev/null || fail "creating survivor-$p"
done
declare -A SURVIVOR_PID
for p in $PARTITIONS; do
  wait_until $POD_START_S "pod survivor-$p Running" pod_running survivor-$p || { k -n $NS describe pod survivor-$p | tail -15; continue; }
  SURVIVOR_PID[$p]=$(container_pid $p survivor-$p)
  [ -n "${SURVIVOR_PID[$p]}" ] || fail "no task for survivor-$p in containerd-$p"
  if [ "${ALLOC_MODE[$p]}" = kubelet ]; then
    expect_eq "kubelet-$p's shared pool (defaultCpuSet) with survivor-$p on every pod CPU" \
      "$(jq -r .defaultCpuSet "$(kubelet_root $p)/cpu_manager_state" 2>&1)" ""
  fi
done

# recovered P UNIT OLDPID: UNIT runs again under a new MainPID, the other
# two daemons of P are active, kubelet answers and the Node is Ready.
recovered() {
  local p=$1 u=$2 old=$3 v pid
  pid=$(unit_prop "$u" MainPID)
  [ "${pid:-0}" -gt 0 ] && [ "$pid" != "$old" ] || return 1
  for v in containerd-$p.service numa-allocator@$p.service kubelet-$p.service; do
    [ "$(unit_prop "$v" ActiveState)" = active ] || return 1
  done
  kubelet_healthz "$p" >/dev/null && node_ready "$(node_name "$p")"
}

# survivor_kept P WHEN: P's survivor still runs the same container; if
# not, the pod's events say why kubelet replaced it.
survivor_kept() {
  local now
  now=$(container_pid "$1" survivor-$1)
  expect_eq "survivor-$1's container $2 (PID)" "$now" "${SURVIVOR_PID[$1]}"
  [ "$now" = "${SURVIVOR_PID[$1]}" ] && return
  k -n $NS get events --field-selector involvedObject.name=survivor-$1 -o custom-columns=REASON:.reason,MESSAGE:.message --no-headers 2>&1 | tail -6 | sed 's/^/    /'
}

for p in $PARTITIONS; do
  for u in containerd-$p.service numa-allocator@$p.service kubelet-$p.service; do
    old=$(unit_prop "$u" MainPID)
    [ "${old:-0}" -gt 0 ] || { fail "$u has no MainPID before the kill"; continue; }
    t0=$SECONDS
    kill -9 "$old"
    if wait_until $RECOVER_S "$u killed (SIGKILL): partition $p's daemons active, kubelet healthy, Node Ready" recovered "$p" "$u" "$old"; then
      echo "  $u: recovered in $((SECONDS - t0)) s (bound ${RECOVER_S} s); NRestarts $(unit_prop "$u" NRestarts)"
    else
      for v in containerd-$p.service numa-allocator@$p.service kubelet-$p.service; do journal_tail "$v" 10; done
    fi
    [ -n "${SURVIVOR_PID[$p]:-}" ] && survivor_kept "$p" "after the kill of $u"
  done
done

# kubelet acts on a sandbox it finds not ready at its next relist and
# pod sync, which can come after it answered /healthz: the survivors are
# checked once more after 30 s of quiet.
sleep 30
for p in $PARTITIONS; do
  [ -n "${SURVIVOR_PID[$p]:-}" ] || continue
  survivor_kept "$p" "30 s after the last kill"
  expect_eq "survivor-$p's restartCount after every kill" "$(api "$(pod_path survivor-$p)" '.status.containerStatuses[0].restartCount')" 0
done

# The kubelets restarted with a survivor on every pod CPU: each one's
# ExecStartPre moved the checkpoint kubelet would refuse aside, and
# kubelet gave the survivor its CPUs again.
for p in $PARTITIONS; do
  [ "${ALLOC_MODE[$p]}" = kubelet ] || continue
  repairs=$(journalctl -b --no-pager -o cat -u kubelet-$p.service | grep -c "had every CPU exclusively assigned")
  [ "$repairs" -ge 1 ] && ok "kubelet-$p: the empty shared pool's checkpoint moved aside before $repairs of its starts" \
    || fail "kubelet-$p: no 'kubelet-state repair' before its restarts"
  expect_eq "kubelet-$p: 'default cpuset cannot be empty' refusals" \
    "$(journalctl -b --no-pager -o cat -u kubelet-$p.service | grep -c 'default cpuset cannot be empty')" 0
  assigned() { [ "$(jq -r --arg u "$(api "$(pod_path survivor-$1)" .metadata.uid)" '.entries[$u] // {} | length' "$(kubelet_root $1)/cpu_manager_state")" -ge 1 ]; }
  wait_until 120 "kubelet-$p's fresh cpu_manager_state assigns survivor-$p its CPUs again" assigned $p
done
k -n $NS delete pod $(for p in $PARTITIONS; do echo survivor-$p; done) --wait=true --timeout=120s >/dev/null 2>&1

# Everything works again, not only the units: a new pod per partition.
for p in $PARTITIONS; do
  pod_yaml after-crash-$p $p '{}' | run k apply -f - >/dev/null || fail "creating after-crash-$p"
done
for p in $PARTITIONS; do
  wait_until $POD_START_S "pod after-crash-$p Running after the crashes" pod_running after-crash-$p \
    || { k -n $NS describe pod after-crash-$p | tail -15; journal_tail kubelet-$p.service; }
done
k -n $NS delete pod $(for p in $PARTITIONS; do echo after-crash-$p; done) --wait=false >/dev/null 2>&1
finish
