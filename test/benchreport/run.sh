#!/usr/bin/env bash
# make bench: every benchmark of the product and the merge against
# kubelet's own code (test/tmcompare), in one run, then the README's
# Performance tables printed from their output by test/benchreport.
# The outputs and the tables are kept in BENCH_OUT (.cache/bench/<time>).
#
# Run it on a quiet machine: a shared one doubles the figures. As root,
# with the real containerd built (test/realbin/build.sh, which .ci/run
# runs; make passes its folder as NUMA_PARTITION_REALBIN), every table
# is filled; a benchmark that
# cannot run here shows as "not measured" with what it needed.
# NUMA_PARTITION_BENCH_DIR is where the allocator's durable writes go:
# /var/tmp unless set, which must be on the disk the state would be on
# (on tmpfs an fsync costs nothing, and so would the figures).
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-go}
out=${BENCH_OUT:-.cache/bench/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
export NUMA_PARTITION_BENCH_DIR=${NUMA_PARTITION_BENCH_DIR:-/var/tmp}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "benchmarks: product (go test -bench . ./...), outputs in $out" >&2
# -timeout: BenchmarkContainerCreate creates thousands of containers on
# real containerds, 2-9 min on 2 shared cores.
status=0
"$GO" test -run '^$' -bench . -benchmem -timeout 60m ./... 2>&1 | tee "$out/product.txt" || status=$?
echo "benchmarks: the merge against kubelet's code (test/tmcompare)" >&2
(cd test/tmcompare && "$GO" test -run '^$' -bench Ratio -benchtime 5x -timeout 60m) 2>&1 | tee "$out/tmcompare.txt" || status=$?
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
title="\`make bench\`, $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown): $(nproc) × $cpu, $("$GO" env GOVERSION), load average $load_before before and $load_after after; durable writes in $NUMA_PARTITION_BENCH_DIR ($(findmnt -no FSTYPE -T "$NUMA_PARTITION_BENCH_DIR" 2>/dev/null || stat -f -c %T "$NUMA_PARTITION_BENCH_DIR"))."
"$GO" run ./test/benchreport -title "$title" "$out/product.txt" "$out/tmcompare.txt" | tee "$out/performance.md"
if [[ $status -ne 0 ]]; then
	echo "make bench: a benchmark failed (exit $status): see $out/product.txt and $out/tmcompare.txt" >&2
fi
exit "$status"
