# The host reboots as an operator reboots it (issue 37): `systemctl
# reboot` with the pinned pods running (step placement) and the config
# edited since the last apply, a change nobody reviewed. This step
# records what must come back and asks for the reboot, which scenario.sh
# makes once the step passed; step rebooted checks the host after it.
# Boot v2 only: its root is on a disk (/sbin/e2e-init), as a host's is,
# and everything apply wrote, the Nodes' certificates, the images and
# the kubelets' and the allocators' state must come back from there.
. /e2e/guest/lib.sh
requires placement
fs=$(findmnt -no FSTYPE /)
[ "$fs" = ext4 ] || die "the root is $fs, not the disk: nothing would survive a reboot (console.log says what e2e-init found)"
# What step rebooted compares, kept on the disk with the rest.
rm -rf $REBOOT_KEEP && install -d $REBOOT_KEEP
cat /proc/sys/kernel/random/boot_id > $REBOOT_KEEP/boot_id
for p in $PARTITIONS; do
  pod_running pinned-$p || die "pod pinned-$p is not Running: nothing to see come back"
  api "$(pod_path pinned-$p)" '"\(.metadata.uid) \(.status.containerStatuses[0].containerID)"' > $REBOOT_KEEP/pinned-$p
  ok "pod pinned-$p Running: $(cat $REBOOT_KEEP/pinned-$p)"
done
# An edit since the last apply: a label the boot must not put on the
# Nodes (numa-partition.service applies only the reviewed plan).
cp $CONFIG $REBOOT_KEEP/config.toml
sed -i 's|^"e2e.numa-partition.io/boot" = "{hostname}"$|&\n"e2e.numa-partition.io/unreviewed" = "yes"|' $CONFIG
grep -q '^"e2e.numa-partition.io/unreviewed" = "yes"$' $CONFIG && ok "config edited after the last apply: a label e2e.numa-partition.io/unreviewed" \
  || die "could not edit $CONFIG"
out=$(numa-partition --config $CONFIG apply --dry-run 2>&1) || true
grep -q 'unreviewed' <<<"$out" && ok "apply --dry-run shows the unreviewed change" || fail "apply --dry-run does not show the label: $(tail -5 <<<"$out")"
systemctl is-enabled numa-partition.service >/dev/null && ok "numa-partition.service is enabled: it runs at the next boot" || fail "numa-partition.service: $(systemctl is-enabled numa-partition.service 2>&1)"
sync
touch $STATE/reboot-requested
finish
