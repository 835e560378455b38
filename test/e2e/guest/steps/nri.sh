# 5. Partition node1's allocator places containers through its
# containerd's NRI (allocator.mode = "nri"): a best-effort pod runs on the
# shared pool (node1's pod CPUs minus pinned-node1's exclusive CPU); a
# Guaranteed pod that would leave no shared CPU fails to start with the
# allocator's reason in its events; after a kill -9 of the allocator
# (while a pod goes away) it synchronizes with containerd again: its state
# is the running containers; a deleted pod's container is released, and
# kubelet was not restarted with the allocator.
. /e2e/guest/lib.sh
requires placement
p=node1
[ "${ALLOC_MODE[$p]}" = nri ] || die "partition $p is not in nri mode"
uid_of() { api "$(pod_path "$1")" .metadata.uid; }

pinned_cpu=$(status_field "$(cat $STATE/pod-pid-$p)" Cpus_allowed_list)
shared_want=$(expand_cpus ${POD_CPUS[$p]} | tr ',' '\n' | grep -vx "$pinned_cpu" | paste -sd,)
pod_yaml shared-$p $p '{}' | run k apply -f - || fail "creating shared-$p"
if wait_until 180 "pod shared-$p Running" pod_running shared-$p; then
  pid=$(container_pid $p shared-$p)
  expect_eq "best-effort pod shared-$p runs on the shared pool (not pinned-$p's CPU $pinned_cpu)" "$(status_field $pid Cpus_allowed_list)" "$shared_want"
fi

pod_yaml refused-$p $p '{requests: {cpu: "1", memory: 32Mi}, limits: {cpu: "1", memory: 32Mi}}' | run k apply -f - || fail "creating refused-$p"
refused_events() { api "/api/v1/namespaces/$NS/events?fieldSelector=involvedObject.name%3Drefused-$p" '.items[].message'; }
refused_event() { refused_events | grep -q "cannot be placed"; }
if wait_until 180 "pod refused-$p's events carry the allocator's refusal" refused_event; then
  msg=$(refused_events | grep -o 'numa-partition node1: pod[^"]*' | head -1)
  echo "  event: $msg"
  for want in "pod $NS/refused-$p container work" "cpu=1" "memory=32Mi" "topology policy best-effort" "no CPU for the partition's shared pool"; do
    grep -qF "$want" <<<"$msg" && ok "the refusal names '$want'" || fail "the refusal lacks '$want': $msg"
  done
  expect_eq "pod refused-$p phase" "$(api "$(pod_path refused-$p)" .status.phase)" Pending
fi
k -n $NS delete pod refused-$p --wait=false >/dev/null 2>&1

shared_key="$(uid_of shared-$p)/work"
for want in "$(uid_of pinned-$p)/work" "$shared_key"; do
  [[ " $(allocated_keys $p) " == *" $want "* ]] && ok "allocator of $p holds $want" || fail "allocator of $p lacks $want: $(allocated_keys $p)"
done
wait_until 60 "allocator of $p holds exactly the running containers of Node $(node_name $p)" holds_running $p \
  || echo "  allocator: $(allocated_keys $p)"$'\n'"  running:   $(running_keys $p)"

# Freeze the allocator, let shared-$p go away meanwhile (containerd's NRI
# requests to it time out), then kill -9 it: systemd restarts it and it
# must learn from containerd that the container is gone.
kubelet_pid=$(unit_prop kubelet-$p.service MainPID)
run systemctl kill -s STOP numa-allocator@$p.service
run k -n $NS delete pod shared-$p --wait=true --timeout=90s || fail "deleting shared-$p"
run systemctl kill -s KILL numa-allocator@$p.service
active() { [ "$(systemctl is-active numa-allocator@$p.service)" = active ] && numa-partition allocations -p $p -o json >/dev/null 2>&1; }
wait_until 60 "numa-allocator@$p restarted by systemd and answering" active
resynced() { holds_running $p && [[ " $(allocated_keys $p) " != *" $shared_key "* ]]; }
if wait_until 60 "after the restart the allocator's state is the running containers (shared-$p's released)" resynced; then :; else
  echo "  allocations: $(allocated_keys $p)"$'\n'"  running:     $(running_keys $p)"; journal_tail numa-allocator@$p.service 30
fi
# containerd refuses new containers while the allocator is away
# (required_plugins): kubelet has no reason to restart with it, and did
# while it Requires= the allocator (its Node NotReady for a minute).
expect_eq "kubelet-$p's MainPID after the allocator's stop and kill -9 (not restarted)" "$(unit_prop kubelet-$p.service MainPID)" "$kubelet_pid"
grep -q 'required_plugins = \["numa-partition-'$p'"\]' /etc/numa-partition/containerd-$p.toml \
  && ok "containerd-$p requires the allocator's NRI plugin" || fail "containerd-$p.toml lacks required_plugins numa-partition-$p"
log=$(journalctl -b --no-pager -o cat -u numa-allocator@$p.service)
grep -q "allocation released: its container no longer runs" <<<"$log" \
  && ok "the restarted allocator released the container that stopped while it was down" || fail "no release on synchronization logged"
n=$(grep -c "synchronized with the runtime" <<<"$log")
[ "$n" -ge 2 ] && ok "the allocator synchronized with containerd $n times (start, restart)" || fail "synchronized $n times, want at least 2"
finish
