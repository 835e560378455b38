# 4. Each partition's allocator answers `admit`: a Guaranteed pod that fits
# is admitted and pinned to the partition's NUMA node; one asking for more
# memory than the partition has is rejected (exit status 1) with a reason.
. /e2e/guest/lib.sh
requires apply
pod() { # NAME UID-SUFFIX MEMORY
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, uid: 00000000-0000-0000-0000-0000000000$2}
spec:
  containers:
  - name: app
    image: e2e
    resources:
      requests: {cpu: "1", memory: $3}
      limits: {cpu: "1", memory: $3}
YAML
}
i=10
for p in $PARTITIONS; do
  i=$((i + 1))
  pod fits-$p $i 32Mi > $STATE/fits-$p.yaml
  out=$(numa-partition --output json admit -f $STATE/fits-$p.yaml --partition $p 2>&1)
  rc=$?
  echo "$out"
  if [ $rc != 0 ]; then fail "admit of a Guaranteed 1-CPU 32Mi pod in $p exited $rc: $(tail -2 <<<"$out" | tr '\n' ' ')"; continue; fi
  got=$(jq -r '"\(.partition) \(.decision.admitted) \(.decision.pinned) \([.decision.containers[].numaNodes]|join(","))"' <<<"$out" 2>&1)
  expect_eq "$p admission (partition admitted pinned numaNodes)" "$got" "$p true true ${MEMS[$p]}"
  i=$((i + 1))
  pod too-big-$p $i 4Gi > $STATE/big-$p.yaml
  out=$(numa-partition --output json admit -f $STATE/big-$p.yaml --partition $p 2>&1)
  rc=$?
  echo "$out"
  reason=$(jq -r '.decision.reason // empty' <<<"$out" 2>/dev/null)
  if [ $rc = 1 ] && [ -n "$reason" ]; then ok "4Gi pod rejected in $p: $reason"
  else fail "4Gi pod in $p (node has ~1Gi): exit $rc, reason '$reason', want exit 1 with a reason"; fi
done
finish
