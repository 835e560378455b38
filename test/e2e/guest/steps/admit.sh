# 4. Each partition's allocator answers `admit`: a Guaranteed pod that fits
# is admitted on the partition's NUMA node, one that cannot fit is refused.
. /e2e/guest/lib.sh
requires apply
pod() { # NAME CPU MEMORY
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default, uid: 00000000-0000-0000-0000-0000000000$2$2}
spec:
  containers:
  - name: app
    image: e2e
    resources:
      requests: {cpu: "$2", memory: $3}
      limits: {cpu: "$2", memory: $3}
YAML
}
for p in $PARTITIONS; do
  pod fits-$p 1 32Mi > $STATE/fits-$p.yaml
  out=$(numa-partition --output json admit -f $STATE/fits-$p.yaml --partition $p 2>&1)
  rc=$?
  echo "$out"
  if [ $rc != 0 ]; then fail "admit of a 1-CPU 32Mi pod in $p exited $rc: $(tail -2 <<<"$out" | tr '\n' ' ')"; continue; fi
  ok "allocator of $p admitted a 1-CPU 32Mi pod"
  nodes=$(jq -r '[.. | objects | (.numaAffinity? // .numaNodes? // .nodes? // empty) | tostring] | unique | join(" ")' <<<"$out" 2>/dev/null)
  case " $nodes " in *"${MEMS[$p]}"*) ok "$p admission names NUMA node ${MEMS[$p]} ($nodes)" ;;
    *) fail "$p admission does not name NUMA node ${MEMS[$p]}: $(head -c 300 <<<"$out")" ;; esac
  pod too-big-$p 3 32Mi > $STATE/big-$p.yaml
  out=$(numa-partition admit -f $STATE/big-$p.yaml --partition $p 2>&1) \
    && fail "admit of a 3-CPU pod in $p (at most 2 CPUs) succeeded: $out" \
    || ok "3-CPU pod refused in $p: $(tail -1 <<<"$out")"
done
finish
