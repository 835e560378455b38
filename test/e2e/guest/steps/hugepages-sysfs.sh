# Per-node hugepages can be reserved through sysfs on this kernel, node by
# node (what apply's hugepages unit relies on). Leaves both nodes at 0.
. /e2e/guest/lib.sh
hp() { echo "/sys/devices/system/node/node$1/hugepages/hugepages-2048kB/$2"; }
echo 4 > "$(hp 0 nr_hugepages)" || fail "writing node0 nr_hugepages"
echo 6 > "$(hp 1 nr_hugepages)" || fail "writing node1 nr_hugepages"
expect_eq "node0 2M nr_hugepages" "$(cat "$(hp 0 nr_hugepages)")" 4
expect_eq "node1 2M nr_hugepages" "$(cat "$(hp 1 nr_hugepages)")" 6
expect_eq "node1 2M free_hugepages" "$(cat "$(hp 1 free_hugepages)")" 6
expect_eq "global 2M nr_hugepages" "$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)" 10
echo 0 > "$(hp 0 nr_hugepages)"; echo 0 > "$(hp 1 nr_hugepages)"
if [ "$E2E_CGROUP" = v2 ]; then
  # The kernel takes a node's pool pages under the WRITER's cpuset
  # (__GFP_HARDWALL): a writer confined to node 0 gets none on node 1. So
  # whatever sets node N's pool must itself be allowed on node N.
  run systemd-run --wait --quiet -p AllowedCPUs=0 -p AllowedMemoryNodes=0 \
    /bin/sh -c "echo 4 > $(hp 1 nr_hugepages)" || fail "systemd-run of the confined writer"
  expect_eq "node1 pages allocated by a writer confined to node 0" "$(cat "$(hp 1 nr_hugepages)")" 0
  echo 0 > "$(hp 1 nr_hugepages)"
fi
expect_eq "reset global 2M nr_hugepages" "$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)" 0
finish
