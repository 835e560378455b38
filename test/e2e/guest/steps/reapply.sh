# 4. A second `apply` of the same config says "no changes" and restarts nothing.
. /e2e/guest/lib.sh
requires apply
# The services as they are now (the nri step restarts node1's allocator,
# and with it its kubelet).
main_pids > $STATE/pids-before-reapply
out=$(numa-partition apply 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || die "second apply exited $rc: $(tail -3 <<<"$out" | tr '\n' ' ')"
grep -qi "no changes" <<<"$out" && ok "second apply says no changes" || fail "second apply does not say \"no changes\": $(tail -3 <<<"$out" | tr '\n' ' ')"
diff $STATE/pids-before-reapply <(main_pids) >/dev/null \
  && ok "no partition service restarted" || fail "services restarted by a no-op apply: $(diff $STATE/pids-before-reapply <(main_pids) | grep '^>' | tr '\n' ' ')"
finish
