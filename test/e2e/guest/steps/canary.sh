# One partition's kubelet moved to another binary alone (#37), the
# canary of a kubelet upgrade: `kubelet_binary` in that partition's
# [[partition]] table. Here the canary is the same kubelet 1.37.2
# installed at another path (what an operator's canary install looks
# like; the e2e has one kubelet version). apply restarts exactly that
# partition's kubelet, now running the canary's binary, its Node Ready
# again with the version it reports; the other partition is untouched.
# Taking the key away rolls it back the same way.
. /e2e/guest/lib.sh
requires apply
read -r A B <<<"$PARTITIONS"
canary=/usr/local/bin/kubelet-canary
install -D -m 0755 /usr/bin/kubelet $canary || die "installing the canary kubelet at $canary"
exe_of() { readlink /proc/$(unit_prop kubelet-$1.service MainPID)/exe; }
# The VM's /usr/bin/kubelet is a link to the payload's binary.
kubelet=$(readlink -f /usr/bin/kubelet)
# apply_expecting WHAT EXE: apply the config in place; exactly B's
# kubelet restarts, running EXE, and its Node is Ready again.
apply_expecting() {
  local before after out rc
  before=$(main_pids)
  out=$(numa-partition apply 2>&1); rc=$?
  [ $rc = 0 ] || { fail "apply ($1) exited $rc: $(tail -3 <<<"$out" | tr '\n' ' ')"; return; }
  after=$(main_pids)
  expect_eq "services restarted ($1)" "$(restarted "$before" "$after")" "kubelet-$B.service "
  expect_eq "kubelet-$B's executable ($1)" "$(exe_of $B)" "$2"
  expect_eq "kubelet-$A's executable ($1, untouched)" "$(exe_of $A)" "$kubelet"
  wait_healthy
  wait_until 300 "Node $(node_name $B) Ready ($1)" node_ready $(node_name $B)
  expect_eq "Node $(node_name $B)'s kubeletVersion ($1)" \
    "$(api /api/v1/nodes/$(node_name $B) .status.nodeInfo.kubeletVersion)" "$(/usr/bin/kubelet --version | awk '{print $2}')"
}
# The config ends with B's [[partition]] table: the key goes there.
cp $CONFIG $STATE/config-before-canary.toml
{ cat $STATE/config-before-canary.toml; printf 'kubelet_binary = "%s"\n' $canary; } > $CONFIG
apply_expecting "canary" $canary
cp $STATE/config-before-canary.toml $CONFIG
apply_expecting "rolled back" "$kubelet"
rm -f $canary
out=$(numa-partition status 2>&1) && ok "status healthy after the canary and its roll-back" || fail "status: $(tail -4 <<<"$out" | tr '\n' ' ')"
finish
