# 4. `status` reports healthy with the right effective cpusets.
. /e2e/guest/lib.sh
requires apply
out=$(numa-partition --output json status 2>$STATE/status.err)
rc=$?
echo "$out"; cat $STATE/status.err
[ $rc = 0 ] || die "numa-partition status exited $rc (0 = healthy): $(tail -3 $STATE/status.err | tr '\n' ' ')"
ok "status exit 0 (healthy)"
jq -e . >/dev/null <<<"$out" || die "status --output json is not JSON"
for p in $PARTITIONS; do
  part=$(jq -c --arg p $p '[.. | objects | select(.name? == $p)][0]' <<<"$out")
  [ "$part" != null ] || { fail "status JSON has no partition named $p"; continue; }
  echo "  $p: $part" | head -c 600; echo
  eff=$(jq -r '[.. | objects | to_entries[] | select(.key|test("^effective.*cpus$";"i")) | .value | tostring] | join(" ")' <<<"$part")
  case " $eff " in *" ${SLICE_CPUS[$p]} "*) ok "$p effective CPUs include ${SLICE_CPUS[$p]} ($eff)" ;;
    *) fail "$p effective CPUs in status are '$eff', want ${SLICE_CPUS[$p]} (the slice's)" ;; esac
done
numa-partition status > $STATE/status.txt 2>&1 && ok "table status exit 0" || fail "numa-partition status (table) failed: $(tail -3 $STATE/status.txt)"
cat $STATE/status.txt
finish
