# After the reboot (step reboot; issue 37): the host comes back as it was
# applied, from its disk, and only as reviewed. This is a new boot of the
# same root; every partition's units are active again; the Nodes are Ready
# with their addresses; the network namespaces and the hugepage pools are
# as planned; the pinned pods run again (new containers) on their
# partition's CPUs and memory node; each allocator holds exactly what
# runs; and the config edited before the reboot is reported by the boot's
# numa-partition.service, not applied: no Node has its label. Kubelet's
# Memory and CPU Managers start again on their checkpoints (upstream a
# Memory Manager refusing its state after a reboot is a known failure:
# kubernetes#131253).
. /e2e/guest/lib.sh
requires reboot
[ -s $REBOOT_KEEP/boot_id ] || die "$REBOOT_KEEP/boot_id is gone: the root did not survive the reboot (root: $(findmnt -no SOURCE,FSTYPE /))"
before=$(cat $REBOOT_KEEP/boot_id) now=$(cat /proc/sys/kernel/random/boot_id)
[ "$before" != "$now" ] && ok "a new boot ($before -> $now) of the same root ($(findmnt -no SOURCE,FSTYPE /)), up $(cut -d' ' -f1 /proc/uptime) s" \
  || die "boot id unchanged ($now): the host did not reboot"

# The boot's re-apply refused the plan it was not shown.
wait_until 300 "numa-partition.service ran at boot (is-active not activating)" \
  bash -c '[ "$(systemctl is-active numa-partition.service)" != activating ]'
expect_eq "numa-partition.service after the reboot (config edited, not reviewed)" "$(systemctl is-failed numa-partition.service)" failed
journalctl -b --no-pager -o cat -u numa-partition.service | has "is not what this host and config plan now" \
  && ok "numa-partition.service names the plan that no longer matches the config" \
  || { fail "numa-partition.service's journal does not say why it refused"; journal_tail numa-partition.service; }

for p in $PARTITIONS; do
  for u in $(partition_units $p) mountns-$p.service; do
    wait_until 300 "$u active after the reboot" bash -c "[ \"\$(systemctl is-active $u)\" = active ]" || journal_tail $u
  done
done
for p in $PARTITIONS; do
  wait_until 600 "Node $(node_name $p) Ready after the reboot" node_ready $(node_name $p)
done
for p in $PARTITIONS; do
  [ "$NET_MODE" = namespace ] || break
  got=$(ip -n np-$p -4 -o addr show 2>/dev/null | awk '{print $4}' | grep -c "^${ADDRESS[$p]}/")
  expect_eq "partition $p's network namespace np-$p has its address ${ADDRESS[$p]}" "$got" 1
  expect_eq "Node $(node_name $p)'s InternalIP" \
    "$(api /api/v1/nodes/$(node_name $p) '.status.addresses[] | select(.type=="InternalIP") | .address')" "${ADDRESS[$p]}"
done
expect_hugepages

for p in $PARTITIONS; do
  read -r uid cid < $REBOOT_KEEP/pinned-$p
  again() { [ "$(api "$(pod_path pinned-$p)" '"\(.metadata.uid) \(.status.phase)"')" = "$uid Running" ] \
    && [ -n "$(container_pid $p pinned-$p)" ]; }
  wait_until $POD_START_S "pod pinned-$p (the same pod, $uid) Running again" again || continue
  now_cid=$(api "$(pod_path pinned-$p)" '.status.containerStatuses[0].containerID')
  [ "$now_cid" != "$cid" ] && ok "pod pinned-$p runs a new container ($now_cid)" || fail "pod pinned-$p still reports the container of the last boot ($cid)"
  expect_pinned $p pinned-$p
done
for p in $PARTITIONS; do
  wait_until 120 "allocator of $p holds exactly the running containers of Node $(node_name $p)" holds_running $p \
    || echo "  allocator: $(allocated_keys $p)"$'\n'"  running:   $(running_keys $p)"
done

for p in $PARTITIONS; do
  expect_eq "Node $(node_name $p)'s label e2e.numa-partition.io/unreviewed (not applied)" \
    "$(api /api/v1/nodes/$(node_name $p) '.metadata.labels["e2e.numa-partition.io/unreviewed"] // "none"')" none
done
# status tells the operator the config waits (#37).
cfg_state() { numa-partition --config $CONFIG status --no-api -o json 2>/dev/null | jq -r '.config.state // "none"'; }
expect_eq "numa-partition status: the config, edited and not applied" "$(cfg_state)" changed
# The operator's next step: review the change, or put the config back.
cp $REBOOT_KEEP/config.toml $CONFIG
expect_eq "numa-partition status: the config, put back" "$(cfg_state)" applied
run systemctl restart numa-partition.service && ok "with the reviewed config back, numa-partition.service re-applies at once" \
  || { fail "numa-partition.service with the reviewed config"; journal_tail numa-partition.service 60; }
# The reboot moves a node's memory and with it the pid limit: the boot
# applied the reviewed decisions with today's figures, so the plan it
# installed is exactly what the host plans now, and the next boot finds
# nothing to re-apply.
journalctl -b --no-pager -o cat -u numa-partition.service | grep "figures" | tail -1 | sed 's/^/  boot unit: /'
out=$(numa-partition --config $CONFIG apply --plan /etc/numa-partition/plan.json --dry-run 2>&1)
has "no changes" <<<"$out" && ok "the installed plan is what the host plans now: apply --plan --dry-run changes nothing" \
  || fail "apply --plan /etc/numa-partition/plan.json --dry-run after the re-apply: $(tail -5 <<<"$out")"
finish
