# 3. Per-node hugepages as configured (16 × 2M on node 0, 24 × 2M on node 1).
. /e2e/guest/lib.sh
requires apply
expect_hugepages
finish
