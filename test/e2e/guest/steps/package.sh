# numa-partition as an operator installs it: its Debian package, with
# dpkg (#26). The package puts the binary at /usr/bin/numa-partition
# (where the rendered units call it), the man page, the completions, the
# example config under /usr/share and the boot unit, and changes nothing
# on the host: numa-partition.service is enabled (it re-applies at boot)
# but runs only where numa-partition apply has run once; no config is
# installed in /etc, nothing is applied.
. /e2e/guest/lib.sh
units_before=$(ls /etc/systemd/system | sort | tr '\n' ' ')
run dpkg -i /e2e/numa-partition.deb || die "dpkg -i numa-partition.deb failed"
expect_eq "dpkg's status of numa-partition" "$(dpkg-query -W -f '${Status}' numa-partition)" "install ok installed"
expect_eq "numa-partition on PATH" "$(command -v numa-partition)" /usr/bin/numa-partition
v=$(numa-partition version 2>&1) && ok "numa-partition version: $(head -1 <<<"$v")" || fail "numa-partition version: $v"
for f in /usr/share/man/man8/numa-partition.8.gz /usr/share/bash-completion/completions/numa-partition \
  /usr/share/numa-partition/config.toml /lib/systemd/system/numa-partition.service /usr/share/doc/numa-partition/copyright; do
  [ -f $f ] && ok "$f installed" || fail "$f missing"
done
[ -e /etc/numa-partition/config.toml ] && fail "the package installed a config that the boot unit would apply unreviewed" \
  || ok "no config in /etc/numa-partition: nothing applies before the operator reviews one"
expect_eq "numa-partition.service (the boot re-apply)" "$(systemctl is-enabled numa-partition.service 2>&1)" enabled
run systemctl start numa-partition.service || fail "starting numa-partition.service"
expect_eq "numa-partition.service ran nothing (its condition: an applied record)" \
  "$(unit_prop numa-partition.service ConditionResult) $(unit_prop numa-partition.service ExecMainStartTimestampMonotonic)" "no 0"
[ -e /var/lib/numa-partition/applied.json ] && fail "something was applied by the install" || ok "nothing applied"
expect_eq "new entries in /etc/systemd/system (the enablement link goes into multi-user.target.wants)" \
  "$(comm -13 <(tr ' ' '\n' <<<"$units_before" | sort) <(ls /etc/systemd/system | sort) | tr '\n' ' ')" ""
finish
