# 4. `remove` with pods running: plain `remove` refuses, naming a pod
# bound to a partition's Node, and changes nothing; `remove --drain
# --force --kubeconfig` (the cluster admin's identity) cordons and drains
# each Node through the Eviction API as kubectl drain does (DaemonSet pods
# stay), then leaves the units and drop-ins gone, the pods stopped, the
# host's CPUs given back to system.slice, and deletes the partitions'
# Nodes once their kubelets have stopped.
. /e2e/guest/lib.sh
requires apply
pods=$(cat $STATE/pod-pid-* 2>/dev/null)
# A pod of no controller in each partition, as an operator's leftover.
for p in $PARTITIONS; do
  pod_yaml leftover-$p $p '{}' | run k apply -f - >/dev/null || fail "creating leftover-$p"
done
for p in $PARTITIONS; do
  wait_until $POD_START_S "pod leftover-$p Running" pod_running leftover-$p || k -n $NS describe pod leftover-$p | tail -10
done
units_before=$(ls /etc/systemd/system | sort | tr '\n' ' ')
out=$(numa-partition remove 2>&1); rc=$?
echo "$out" | sed 's/^/  plain remove: /'
[ $rc != 0 ] && grep -q "leftover-" <<<"$out" && ok "plain remove refused (exit $rc), naming the pods bound to the Nodes" \
  || fail "plain remove with pods bound exited $rc: $(tail -2 <<<"$out" | tr '\n' ' ')"
expect_eq "the refused remove changed no unit file" "$(ls /etc/systemd/system | sort | tr '\n' ' ')" "$units_before"
for p in $PARTITIONS; do
  expect_eq "kubelet-$p still active after the refusal" "$(unit_prop kubelet-$p.service ActiveState)" active
done
t0=$SECONDS
out=$(numa-partition remove --drain --force --kubeconfig /e2e/cluster/admin.conf 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || die "numa-partition remove --drain exited $rc: $(tail -3 <<<"$out" | tr '\n' ' ')"
ok "remove --drain --force --kubeconfig exited 0 in $((SECONDS - t0)) s"
for p in $PARTITIONS; do
  n=$(node_name $p)
  gone() { ! api_get "/api/v1/nodes/$1" >/dev/null 2>&1; }
  wait_until 60 "Node $n deleted" gone $n
  left=$(api "/api/v1/pods?fieldSelector=spec.nodeName%3D$n" '.items[].metadata | "\(.namespace)/\(.name)"' 2>/dev/null \
    | grep -v -e '^kube-system/kube-proxy-' -e '^kube-flannel/' -e '^kube-system/node-exporter' -e '^kube-system/np-deviceplugin' | tr '\n' ' ')
  [ -z "$left" ] && ok "no pod but DaemonSet pods left bound to $n" || fail "pods still bound to the removed Node $n: $left"
done
left=$(cd /etc/systemd/system && ls -d node*.slice kubelet-* containerd-node* mountns-node* netns-node* numa-allocator@* numa-partition-hugepages.service 2>/dev/null | tr '\n' ' ')
[ -z "$left" ] && ok "no unit files left" || fail "unit files left in /etc/systemd/system: $left"
dropins=$(find /etc/systemd/system /run/systemd/system -path '*.d/*' -name '*numa-partition*' 2>/dev/null | tr '\n' ' ')
[ -z "$dropins" ] && ok "no drop-ins left" || fail "drop-ins left: $dropins"
partition_units_loaded() {
  systemctl list-units --all --plain --no-legend 'kubelet-node*' 'containerd-node*' 'mountns-node*' 'netns-node*' 'numa-allocator@*' $(for p in $PARTITIONS; do echo $p.slice; done) 'numa-partition-hugepages.service' \
    | awk '$3!="inactive"||$2!="not-found"{print $1}' | tr '\n' ' '
}
# systemd unloads a unit once nothing refers to it any more; the pods'
# transient units kubelet made go a moment after the slices stop.
none_loaded() { [ -z "$(partition_units_loaded)" ]; }
if ! wait_until 20 "no partition unit loaded" none_loaded; then
  for u in $(partition_units_loaded); do
    echo "  $u: $(systemctl show -p LoadState -p ActiveState -p SubState -p FragmentPath -p RequiredBy -p WantedBy -p ConsistsOf -p ControlGroup $u | tr '\n' ' ')"
  done
  echo "  cgroups left: $(find /sys/fs/cgroup -type d -name 'node[01]*' 2>/dev/null | tr '\n' ' ')"
  for d in $(find /sys/fs/cgroup -type d -path '*node[01].slice*' 2>/dev/null); do
    echo "    $d: procs '$(cat $d/cgroup.procs 2>/dev/null | tr '\n' ' ')' children '$(ls -F $d | grep / | tr '\n' ' ')'"
    for pid in $(cat $d/cgroup.procs 2>/dev/null); do echo "      $pid: $(tr '\0' ' ' < /proc/$pid/cmdline)"; done
  done
fi
shims=$(pgrep -f containerd-shim-runc-v2 | tr '\n' ' ')
[ -z "$shims" ] && ok "no containerd shim left" || fail "containerd shims outlived remove: $shims"
for pid in $pods; do
  [ -d /proc/$pid ] && fail "pod process $pid still running" || ok "pod $pid stopped"
done
# The host gets every CPU back (systemd realizes cgroups lazily: allow it a moment).
# With every runtime AllowedCPUs= gone (init.scope's under
# /run/systemd/transient included) systemd switches the cpuset controller
# off again when it was off before apply (topology step): then no file.
if [ "$(cat $STATE/system-slice-cpuset 2>/dev/null)" = absent ]; then
  cpus_back() { [ ! -e "$1" ]; }
else
  cpus_back() { [ "$(cat "$1")" = 0-3 ]; }
fi
left=$(ls /run/systemd/system.control/*.d/50-Allowed* /run/systemd/transient/*.d/50-Allowed* 2>/dev/null | tr '\n' ' ')
[ -z "$left" ] && ok "no runtime AllowedCPUs=/AllowedMemoryNodes= drop-in left" || fail "runtime drop-ins left: $left"
if [ "$E2E_CGROUP" = v2 ]; then
  wait_until 15 "system.slice's cpuset back as before apply ($(cat $STATE/system-slice-cpuset 2>/dev/null): 0-3 or no cpuset)" cpus_back /sys/fs/cgroup/system.slice/cpuset.cpus.effective \
    || echo "  system.slice cpuset.cpus.effective: $(cat /sys/fs/cgroup/system.slice/cpuset.cpus.effective); AllowedCPUs: '$(unit_prop system.slice AllowedCPUs)'"
else
  for p in $PARTITIONS; do
    [ -d /sys/fs/cgroup/cpuset/$p.slice ] && fail "cpuset v1 group $p.slice left" || ok "cpuset v1 group $p.slice removed"
    [ -d /sys/fs/cgroup/hugetlb/$p.slice ] && fail "hugetlb v1 group $p.slice left" || ok "hugetlb v1 group $p.slice removed"
  done
fi
expect_eq "PID 1 Cpus_allowed_list" "$(status_field 1 Cpus_allowed_list)" 0-3
if [ "$NET_MODE" = namespace ]; then
  left=$(ls /run/netns 2>/dev/null | tr '\n' ' ')
  [ -z "$left" ] && ok "no network namespace left" || fail "network namespaces left: $left"
  expect_eq "the host's links as before apply" "$(ip -o link | awk '{print $2}' | sort | tr '\n' ' ')" "$(tr '\n' ' ' < $STATE/links-before)"
  expect_eq "IPv4 forwarding as before apply" "$(cat /proc/sys/net/ipv4/ip_forward)" "$(cat $STATE/ip_forward-before)"
fi
run k get nodes -l e2e.numa-partition.io/boot=$BOOT
finish
