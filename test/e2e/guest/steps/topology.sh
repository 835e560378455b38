# The VM is what the e2e claims: 2 sockets, 2 NUMA nodes with 2 CPUs each
# (n4: 4 NUMA nodes with one CPU each), both hugepage sizes per node, the
# requested cgroup mode, systemd as PID 1.
. /e2e/guest/lib.sh
expect_eq "PID 1" "$(cat /proc/1/comm)" systemd
if [ "$E2E_MODE" = n4 ]; then
  # 2 sockets of 2 NUMA nodes, one CPU each; 12 within a socket, 20 across.
  expect_eq "NUMA nodes" "$(cd /sys/devices/system/node && echo node*)" "node0 node1 node2 node3"
  for n in 0 1 2 3; do expect_eq "node$n cpulist" "$(cat /sys/devices/system/node/node$n/cpulist)" $n; done
  expect_eq "node0 distances" "$(cat /sys/devices/system/node/node0/distance)" "10 12 20 20"
  expect_eq "node3 distances" "$(cat /sys/devices/system/node/node3/distance)" "20 20 12 10"
  nodes="0 1 2 3"
else
  expect_eq "NUMA nodes" "$(cd /sys/devices/system/node && echo node*)" "node0 node1"
  expect_eq "node0 cpulist" "$(cat /sys/devices/system/node/node0/cpulist)" 0-1
  expect_eq "node1 cpulist" "$(cat /sys/devices/system/node/node1/cpulist)" 2-3
  expect_eq "node0 distances" "$(cat /sys/devices/system/node/node0/distance)" "10 20"
  expect_eq "node1 distances" "$(cat /sys/devices/system/node/node1/distance)" "20 10"
  nodes="0 1"
fi
pkgs=$(for c in 0 1 2 3; do cat /sys/devices/system/cpu/cpu$c/topology/physical_package_id; done | tr '\n' ' ')
expect_eq "CPU packages (cpu0..3)" "$pkgs" "0 0 1 1 "
for n in $nodes; do
  expect_eq "node$n hugepage sizes" "$(ls /sys/devices/system/node/node$n/hugepages | tr '\n' ' ')" \
    "hugepages-1048576kB hugepages-2048kB "
  mem=$(awk '/MemTotal/{print $4}' /sys/devices/system/node/node$n/meminfo)
  [ "${mem:-0}" -gt 300000 ] && ok "node$n MemTotal ${mem} kB" || fail "node$n MemTotal is '${mem}' kB, want > 300000"
done
fs=$(stat -fc %T /sys/fs/cgroup)
if [ "$E2E_CGROUP" = v2 ]; then
  expect_eq "cgroup fs" "$fs" cgroup2fs
  # Before anything is applied: remove must leave system.slice so.
  [ -e /sys/fs/cgroup/system.slice/cpuset.cpus.effective ] && echo present > $STATE/system-slice-cpuset || echo absent > $STATE/system-slice-cpuset
  echo "  system.slice cpuset before apply: $(cat $STATE/system-slice-cpuset)"
  grep -qw cpuset /sys/fs/cgroup/cgroup.controllers && ok "cpuset controller on v2" \
    || fail "cpuset missing from /sys/fs/cgroup/cgroup.controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
else
  expect_eq "cgroup fs" "$fs" tmpfs
  [ -f /sys/fs/cgroup/cpuset/cpuset.cpus ] && ok "cpuset v1 hierarchy mounted" || fail "no /sys/fs/cgroup/cpuset"
  [ -d /sys/fs/cgroup/systemd ] && ok "name=systemd hierarchy mounted" || fail "no /sys/fs/cgroup/systemd"
  # systemd 252 with unified_cgroup_hierarchy=0 is hybrid: v1 controllers,
  # plus a controller-less cgroup2 at unified/ (what most v1 hosts run).
  expect_eq "cgroup2 at /sys/fs/cgroup/unified (hybrid)" "$(stat -fc %T /sys/fs/cgroup/unified 2>&1)" cgroup2fs
fi
echo "  systemd $(systemctl --version | head -1 | cut -d' ' -f2), kernel $(uname -r), virt $(systemd-detect-virt)"
finish
