# 4. A second `apply` of the same config says "no changes" and restarts nothing.
. /e2e/guest/lib.sh
requires apply
out=$(numa-partition apply 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || die "second apply exited $rc: $(tail -3 <<<"$out" | tr '\n' ' ')"
grep -qi "no changes" <<<"$out" && ok "second apply says no changes" || fail "second apply does not say \"no changes\": $(tail -3 <<<"$out" | tr '\n' ' ')"
diff <(cat $STATE/pids-after-apply) <(main_pids) >/dev/null \
  && ok "no partition service restarted" || fail "services restarted by a no-op apply: $(diff $STATE/pids-after-apply <(main_pids) | grep '^>' | tr '\n' ' ')"
finish
