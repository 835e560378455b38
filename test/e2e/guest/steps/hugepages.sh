# 3. Per-node hugepages as configured (16 × 2M on node 0, 24 × 2M on node 1).
. /e2e/guest/lib.sh
requires apply
for p in $PARTITIONS; do
  n=${MEMS[$p]}
  expect_eq "node$n 2M nr_hugepages" "$(cat /sys/devices/system/node/node$n/hugepages/hugepages-2048kB/nr_hugepages)" "${HUGEPAGES_2M[$p]}"
  expect_eq "node$n 1G nr_hugepages" "$(cat /sys/devices/system/node/node$n/hugepages/hugepages-1048576kB/nr_hugepages)" 0
done
expect_eq "system-wide 2M nr_hugepages" "$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)" 40
finish
