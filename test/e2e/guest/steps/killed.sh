# 8. apply killed with SIGKILL on the real host, at six points of a
# config change (node1's max_pods): status says an apply was interrupted
# exactly when the record is still pending, the next apply converges, and
# the host ends healthy with the last config in force.
. /e2e/guest/lib.sh
requires change
grep -q '^max_pods = ' $CONFIG || die "the config has no max_pods line (step change)"
status_json() { numa-partition --output json status 2>/dev/null; }
healthy() { [ "$(status_json | jq -r .health)" = healthy ]; }
for delay in 0.3 0.7 1 1.3 1.7 2.5; do
  n=$((60 + ${delay/./}))
  sed -i "s/^max_pods = .*/max_pods = $n/" $CONFIG
  numa-partition apply > $STATE/killed-apply.log 2>&1 &
  pid=$!
  sleep $delay
  kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
  steps=$(grep -c 'apply step' $STATE/killed-apply.log)
  pending=$(jq -r '.pending // false' /var/lib/numa-partition/applied.json)
  said=$(status_json | jq -r '[.problems[] | select(test("interrupted"))] | length')
  echo "  killed after ${delay}s, $steps steps logged; record pending=$pending"
  expect_eq "status says interrupted (killed at ${delay}s) exactly when the record is pending" "$said" "$([ "$pending" = true ] && echo 1 || echo 0)"
  out=$(numa-partition apply 2>&1) || fail "the apply after the kill at ${delay}s failed: $(tail -3 <<<"$out" | tr '\n' ' ')"
  expect_eq "record pending after the next apply" "$(jq -r '.pending // false' /var/lib/numa-partition/applied.json)" false
  cfg=$(systemctl cat kubelet-node1.service | grep -o -- '--config=[^ ]*' | head -1 | cut -d= -f2)
  grep -q "^maxPods: $n$" "$cfg" && ok "kubelet-node1 runs with maxPods: $n" || fail "$cfg has no 'maxPods: $n'"
  wait_until 180 "status healthy after the kill at ${delay}s and the next apply" healthy || status_json | jq -c .problems
done
out=$(numa-partition apply 2>&1)
grep -q "^no changes" <<<"$out" && ok "a further apply changes nothing" || fail "a further apply changed something: $(tail -3 <<<"$out" | tr '\n' ' ')"
finish
