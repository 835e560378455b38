# 1. `discover` sees the VM's nodes (2; n4: 4) with their CPUs, memory and
# both hugepage sizes.
. /e2e/guest/lib.sh
out=$(numa-partition --output json discover 2>$STATE/discover.err) \
  || die "numa-partition --output json discover failed: $(tail -3 $STATE/discover.err)"
echo "$out" > $STATE/discover.json
# One jq run (each costs a second or more under emulation): "key value" lines.
facts=$(jq -r '
  "ids \([.nodes[].id]|join(","))",
  "kinds \([.nodes[].kind]|join(","))",
  "sockets \([.sockets[]|"\(.id):\(.cpus)"]|join(" "))",
  "distances \([.nodes[].distances|map(tostring)|join(" ")]|join(" / "))",
  "online \(.online)",
  (.nodes[] | "node\(.id)_cpus \(.cpus)", "node\(.id)_memory \(.memoryBytes)",
              "node\(.id)_pagesizes \([.hugepages[].pageSize]|map(tostring)|join(","))")
' <<<"$out") || die "discover output is not JSON with the documented fields: $(head -c 300 <<<"$out")"
q() { awk -v k="$1" '$1==k{sub(/^[^ ]* /,""); print}' <<<"$facts"; }
if [ "$E2E_MODE" = n4 ]; then
  nodes="0 1 2 3"
  expect_eq "node ids" "$(q ids)" 0,1,2,3
  for n in $nodes; do expect_eq "node$n cpus" "$(q node${n}_cpus)" $n; done
  expect_eq "node kinds" "$(q kinds)" "cpu+memory,cpu+memory,cpu+memory,cpu+memory"
  expect_eq "distances" "$(q distances)" "10 12 20 20 / 12 10 20 20 / 20 20 10 12 / 20 20 12 10"
else
  nodes="0 1"
  expect_eq "node ids" "$(q ids)" 0,1
  expect_eq "node0 cpus" "$(q node0_cpus)" 0-1
  expect_eq "node1 cpus" "$(q node1_cpus)" 2-3
  expect_eq "node kinds" "$(q kinds)" "cpu+memory,cpu+memory"
  expect_eq "distances" "$(q distances)" "10 20 / 20 10"
fi
expect_eq "sockets" "$(q sockets)" "0:0-1 1:2-3"
for n in $nodes; do
  kb=$(awk '/MemTotal/{print $4}' /sys/devices/system/node/node$n/meminfo)
  expect_eq "node$n memoryBytes (= MemTotal)" "$(q node${n}_memory)" "$((kb * 1024))"
  expect_eq "node$n hugepage sizes" "$(q node${n}_pagesizes)" 2097152,1073741824
done
expect_eq "online CPUs" "$(q online)" 0-3
numa-partition discover > $STATE/discover.txt 2>&1 && ok "table output" || fail "numa-partition discover (table) failed: $(tail -3 $STATE/discover.txt)"
cat $STATE/discover.txt
finish
