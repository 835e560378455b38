# A kubelet upgrade as an operator rolls it (#37): one partition first,
# the canary, then every partition, each Node drained before its kubelet
# moves, as kubeadm's upgrade drains a Node (docs/apply.md). The new
# kubelet is another build: kubelet 1.37.2 linked again, stamped
# v1.37.2+canary (test/realbin/build.sh), installed at its own path.
# - canary: `kubelet_binary` in B's [[partition]] table, `apply --drain`:
#   B's Node (reason newSoftware) is cordoned, its pod evicted, its
#   kubelet alone restarted on the new build, and the Node uncordoned once
#   Ready, reporting the canary's version, while A's kubelet runs on,
#   untouched, reporting the old one.
# - rolled to both: `binary` in [kubelet], B's key gone, `apply --drain`:
#   A's Node alone is drained (B runs the build already) and both report
#   the canary's version.
# The canary's apply --drain authenticates as the kubeconfigs of managed
# and SSO-fronted clusters do (#40): an exec credential plugin, a script
# of this step's that hands out a token of the least-privileged drain
# identity the package ships (examples/drain-rbac.yaml, installed under
# /usr/share/doc). The plugin must have run, and the Node must carry the
# Events of the apply and of the drain that identity posted.
# The steps after this one run on the canary build (the same source).
# It runs after reserve, whose pods it would otherwise evict.
. /e2e/guest/lib.sh
requires apply
read -r A B <<<"$PARTITIONS"
canary=/usr/local/bin/kubelet-canary
mkdir -p ${canary%/*}
gunzip -c /e2e/canary/kubelet.gz > $canary && chmod 0755 $canary || die "installing the canary kubelet at $canary"
old_version=$(kubelet --version | awk '{print $2}') new_version=$($canary --version | awk '{print $2}')
[ -n "$new_version" ] && [ "$new_version" != "$old_version" ] && ok "the canary build reports $new_version, the running one $old_version" \
  || die "the canary build reports '$new_version', the running one '$old_version': no upgrade to see"
exe_of() { readlink /proc/$(unit_prop kubelet-$1.service MainPID)/exe; }
version_of() { api /api/v1/nodes/$(node_name $1) .status.nodeInfo.kubeletVersion; }

# exec_kubeconfig DIR: writes DIR/kubeconfig, the e2e's cluster with an
# exec credential plugin (DIR/plugin, which logs each run in DIR/runs) for
# user numa-partition-drain, and prints its path.
exec_kubeconfig() {
  local dir=$1 rbac=/usr/share/doc/numa-partition/examples/drain-rbac.yaml server ca
  mkdir -p "$dir"
  [ -s $rbac ] || die "the package ships no $rbac"
  run k apply -f - <$rbac >/dev/null || die "applying $rbac"
  k -n kube-system create token numa-partition-drain --duration=2h >"$dir/token" && [ -s "$dir/token" ] \
    || die "a token of ServiceAccount kube-system/numa-partition-drain"
  cat >"$dir/plugin" <<PLUGIN
#!/bin/sh
echo "\$(date +%s) \${KUBERNETES_EXEC_INFO:+exec-info}" >>$dir/runs
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}\n' "\$(cat $dir/token)"
PLUGIN
  chmod 0755 "$dir/plugin"
  server=$(awk '$1 == "server:" {print $2; exit}' $KUBECONFIG)
  ca=$(awk '$1 == "certificate-authority-data:" {print $2; exit}' $KUBECONFIG)
  cat >"$dir/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: $server
    certificate-authority-data: $ca
users:
- name: numa-partition-drain
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: $dir/plugin
      interactiveMode: Never
contexts:
- name: drain@e2e
  context: {cluster: e2e, user: numa-partition-drain}
current-context: drain@e2e
KUBECONFIG
  echo "$dir/kubeconfig"
}
# node_event_reasons NODE: the reasons of the Events on Node NODE, sorted.
node_event_reasons() {
  api "/api/v1/namespaces/default/events?fieldSelector=involvedObject.kind%3DNode,involvedObject.name%3D$1" '.items[].reason' | sort -u | tr '\n' ' '
}

# apply_drained WHAT MOVED STILL: apply --drain of the config in place;
# exactly MOVED's kubelet restarts, on the canary, its Node drained (a
# pod of this step's there is evicted), uncordoned and reporting the
# canary's version; STILL's kubelet (its PID, its executable) is as
# before and its Node never cordoned.
apply_drained() {
  local what=$1 moved=$2 still=$3 before after out rc json still_exe
  pod_yaml canary-guest $moved '{}' | run k apply -f - >/dev/null || fail "creating pod canary-guest"
  wait_until $POD_START_S "pod canary-guest Running in partition $moved" pod_running canary-guest
  before=$(main_pids)
  still_exe=$(exe_of $still)
  out=$(numa-partition --output json apply ${drain:-$DRAIN} 2>$STATE/canary-apply.err); rc=$?
  [ $rc = 0 ] || { tail -5 $STATE/canary-apply.err; fail "apply --drain ($what) exited $rc"; return; }
  json=$(jq -c --arg n "$(node_name $moved)" '[.nodes[] | select(.node == $n) | {reason, uncordoned, evicted: .drain.evicted}]' <<<"$out")
  expect_eq "apply --drain ($what): the Nodes it disrupted" "$(jq -r '[.nodes[].node] | join(" ")' <<<"$out")" "$(node_name $moved)"
  expect_eq "apply --drain ($what): Node $(node_name $moved) drained and uncordoned for the new kubelet" "$json" \
    '[{"reason":"newSoftware","uncordoned":true,"evicted":1}]'
  jq -r '.nodes[].actions[]' <<<"$out" | grep -qxF "restart on the new executables (kubelet /usr/bin/kubelet → $canary)" \
    && ok "its actions say what moves (kubelet /usr/bin/kubelet → $canary)" || fail "its actions do not say what moves: $(jq -c '.nodes[].actions' <<<"$out")"
  after=$(main_pids)
  expect_eq "services restarted ($what)" "$(restarted "$before" "$after")" "kubelet-$moved.service "
  expect_eq "kubelet-$moved's executable ($what)" "$(exe_of $moved)" "$canary"
  expect_eq "kubelet-$still's executable ($what, untouched)" "$(exe_of $still)" "$still_exe"
  gone() { ! api "$(pod_path canary-guest)" .metadata.name >/dev/null 2>&1; }
  wait_until 120 "pod canary-guest evicted from Node $(node_name $moved)" gone
  wait_healthy
  wait_until 300 "Node $(node_name $moved) Ready ($what)" node_ready $(node_name $moved)
  expect_eq "Node $(node_name $moved)'s kubeletVersion ($what)" "$(version_of $moved)" "$new_version"
  for p in $A $B; do
    expect_eq "Node $(node_name $p) cordoned ($what)" "$(node_unschedulable $(node_name $p))" false
  done
  k -n $NS delete pod canary-guest --wait=false >/dev/null 2>&1
}

# The config ends with B's [[partition]] table: the key goes there.
cp $CONFIG $STATE/config-before-canary.toml
{ cat $STATE/config-before-canary.toml; printf 'kubelet_binary = "%s"\n' $canary; } > $CONFIG
out=$(numa-partition apply $DRAIN --dry-run 2>&1) || fail "apply --drain --dry-run (canary) failed: $(tail -3 <<<"$out")"
grep -q "restart on the new executables (kubelet /usr/bin/kubelet → $canary)" <<<"$out" \
  && ok "apply --drain --dry-run says B's kubelet moves, and that its Node is drained first" || { echo "$out" | tail -15; fail "the dry run does not say B's kubelet moves"; }
execdir=$STATE/exec-credential
execkc=$(exec_kubeconfig $execdir) || die "writing the exec-credential kubeconfig"
drain="--drain --force --delete-emptydir-data --kubeconfig $execkc" apply_drained "canary, exec credential plugin" $B $A
[ -s $execdir/runs ] && ok "the exec credential plugin ran ($(wc -l <$execdir/runs) times, $(grep -c exec-info $execdir/runs) with KUBERNETES_EXEC_INFO)" \
  || fail "the exec credential plugin never ran: apply --drain did not use $execkc"
reasons=$(node_event_reasons $(node_name $B))
for r in DrainStarted Drained Uncordoned PartitionApplied; do
  expect_has "Event $r on Node $(node_name $B) (posted as numa-partition-drain)" "$reasons" "$r"
done
expect_eq "Node $(node_name $A)'s kubeletVersion (canary: the old one)" "$(version_of $A)" "$old_version"

# Rolled to both: [kubelet]'s binary moves, B's own key goes.
sed "s|^\[kubelet\]$|[kubelet]\nbinary = \"$canary\"|" $STATE/config-before-canary.toml > $CONFIG
grep -qx "binary = \"$canary\"" $CONFIG || die "the config has no [kubelet] table to name the canary in"
apply_drained "rolled to both" $A $B
expect_eq "Node $(node_name $B)'s kubeletVersion (rolled to both)" "$(version_of $B)" "$new_version"
out=$(numa-partition status 2>&1) && ok "status healthy on the new kubelet" || fail "status: $(tail -4 <<<"$out" | tr '\n' ' ')"
finish
