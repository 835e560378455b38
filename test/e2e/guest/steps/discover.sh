# 1. `discover` sees 2 nodes with their CPUs, memory and both hugepage sizes.
. /e2e/guest/lib.sh
out=$(numa-partition --output json discover 2>$STATE/discover.err) \
  || die "numa-partition --output json discover failed: $(tail -3 $STATE/discover.err)"
echo "$out" > $STATE/discover.json
jq -e . >/dev/null <<<"$out" || die "discover output is not JSON: $(head -c 300 <<<"$out")"
q() { jq -r "$1" <<<"$out"; }
expect_eq "node ids" "$(q '[.nodes[].id]|join(",")')" 0,1
expect_eq "node0 cpus" "$(q '.nodes[0].cpus')" 0-1
expect_eq "node1 cpus" "$(q '.nodes[1].cpus')" 2-3
expect_eq "node kinds" "$(q '[.nodes[].kind]|join(",")')" "cpu+memory,cpu+memory"
expect_eq "sockets" "$(q '[.sockets[]|"\(.id):\(.cpus)"]|join(" ")')" "0:0-1 1:2-3"
expect_eq "distances" "$(q '[.nodes[].distances|map(tostring)|join(" ")]|join(" / ")')" "10 20 / 20 10"
for n in 0 1; do
  kb=$(awk '/MemTotal/{print $4}' /sys/devices/system/node/node$n/meminfo)
  expect_eq "node$n memoryBytes (= MemTotal)" "$(q ".nodes[$n].memoryBytes")" "$((kb * 1024))"
  expect_eq "node$n hugepage sizes" "$(q "[.nodes[$n].hugepages[].pageSize]|map(tostring)|join(\",\")")" 2097152,1073741824
done
expect_eq "online CPUs" "$(q .online)" 0-3
numa-partition discover > $STATE/discover.txt 2>&1 && ok "table output" || fail "numa-partition discover (table) failed: $(tail -3 $STATE/discover.txt)"
cat $STATE/discover.txt
finish
