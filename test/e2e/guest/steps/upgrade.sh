# A package upgrade on a partitioned host (#37), as an operator's apt
# does it: dpkg installs a newer version of the package over the running
# one (this build's package, its version raised: the maintainer scripts
# run as for any upgrade, prerm upgrade then postinst configure with the
# old version). Real systemd, real partitions: nothing is stopped, started
# or restarted (not the partitions' daemons, not their mount-namespace
# holders, not the boot unit, which would re-apply what nobody reviewed),
# the postinst says so and names `apply --dry-run`, which then finds
# nothing to change (the same render), and every Node stays Ready.
. /e2e/guest/lib.sh
requires apply
holders() { for p in $PARTITIONS; do echo "mountns-$p.service=$(unit_prop mountns-$p.service MainPID)"; done; }
boot_unit_runs() { unit_prop numa-partition.service ExecMainStartTimestampMonotonic; }
before=$(main_pids; holders) boot_before=$(boot_unit_runs)
old=$(dpkg-query -W -f '${Version}' numa-partition)
new="$old+e2e1"
dir=$STATE/upgrade
rm -rf $dir && mkdir -p $dir
run dpkg-deb -R /e2e/numa-partition.deb $dir/pkg || die "unpacking the package"
sed -i "s/^Version: .*/Version: $new/" $dir/pkg/DEBIAN/control
# Uncompressed: xz of a 40 MB binary costs a minute of emulated CPU.
run dpkg-deb -Znone -b $dir/pkg $dir/numa-partition.deb >/dev/null || die "packing version $new"
out=$(dpkg -i $dir/numa-partition.deb 2>&1); rc=$?
sed 's/^/    /' <<<"$out" | tail -8
expect_eq "dpkg -i of $new over $old exits" "$rc" 0
expect_eq "dpkg's version of numa-partition" "$(dpkg-query -W -f '${Version} ${Status}' numa-partition)" "$new install ok installed"
grep -q "installed over version $old with partitions applied" <<<"$out" && grep -q "nothing was restarted" <<<"$out" \
  && ok "the postinst says nothing was restarted and how to see what re-applying changes" \
  || fail "the postinst's note on an applied host is missing"
expect_eq "partition services and holders after the upgrade (main PIDs)" "$(main_pids; holders)" "$before"
expect_eq "numa-partition.service after the upgrade (not run)" "$(boot_unit_runs)" "$boot_before"
expect_eq "numa-partition.service still enabled" "$(systemctl is-enabled numa-partition.service 2>&1)" enabled
out=$(numa-partition apply --dry-run 2>&1); rc=$?
expect_eq "apply --dry-run after the upgrade exits" "$rc" 0
grep -qi "no changes" <<<"$out" && ok "apply --dry-run: no changes (the new version renders the same)" \
  || fail "apply --dry-run after the upgrade: $(tail -4 <<<"$out" | tr '\n' ' ')"
for p in $PARTITIONS; do
  expect_eq "Node $(node_name $p) Ready after the upgrade" "$(node_ready_status $(node_name $p))" True
done
out=$(numa-partition status 2>&1) && ok "status healthy after the upgrade" || fail "status after the upgrade: $(tail -4 <<<"$out" | tr '\n' ' ')"
finish
