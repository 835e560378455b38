# 2. `apply` with a config for 2 partitions and 1 reserved CPU; the
# stand-in kubelets come up healthy with their pods.
. /e2e/guest/lib.sh
install -D -m 0644 /e2e/guest/config/partitions.toml $CONFIG
echo "  \$ numa-partition apply"
numa-partition apply > $STATE/apply.out 2>&1
rc=$?
cat $STATE/apply.out
[ $rc = 0 ] || die "numa-partition apply exited $rc: $(tail -3 $STATE/apply.out | tr '\n' ' ')"
ok "apply exited 0"
wait_healthy
for p in $PARTITIONS; do
  for u in $(partition_units $p); do
    expect_eq "$u ActiveState" "$(unit_prop $u ActiveState)" active
  done
  for u in containerd-$p.service numa-allocator@$p.service kubelet-$p.service; do
    expect_eq "$u NRestarts (no crash loop)" "$(unit_prop $u NRestarts)" 0
  done
done
expect_eq "numa-partition-hugepages.service ActiveState" "$(unit_prop numa-partition-hugepages.service ActiveState)" active
for p in $PARTITIONS; do
  wait_until 60 "$p's stand-in pod running" pod_pid $p
  # The stand-in refuses an invalid KubeletConfiguration: reaching here
  # means each rendered one decoded strictly and passed kubelet's rules.
  journalctl -u kubelet-$p --no-pager -o cat | grep -q 'kubelet configuration is valid' \
    && ok "kubelet-$p accepted its KubeletConfiguration" || fail "kubelet-$p did not log a valid configuration"
done
main_pids > $STATE/pids-after-apply
finish
