#!/usr/bin/env bash
# cost.sh SHARE — where a boot's emulated CPU went, from what its scenario
# left in SHARE (~/.cache/numa-partition/e2e/runs/MODE/share):
#   cpu.tsv      after each step, each cgroup's CPU seconds so far (two
#                levels down: the slices, their services, the scenario's
#                own unit, which runs the steps and their kubectl calls)
#   procs.tsv    after each step, each process of the containerd
#                services: its CPU seconds and its waited-for children's
#   kubectl.tsv  each kubectl call: step, verb, wall seconds
#   status.json, summary-PARTITION.json
#                at step status: `numa-partition status -o json` and
#                each Node's summary API (its pods' usage)
# Prints the cgroups that used the most by the boot's end, the steps that
# used the most (the top-level cgroups' sum) with what used it in each,
# and the kubectl calls per step. CPU figures are TCG's, tens of times a
# real machine's: compare them with each other, not with a host's. Then
# the memory each partition's own services and each Node's pods held at
# step status: memory is the guest's own, as a host's would be (but the
# images' layers sit in the VM's in-memory root, charged to containerd).
set -euo pipefail
share=${1:?usage: cost.sh SHARE}
cpu=$share/cpu.tsv kc=$share/kubectl.tsv

# memory: the partitions' services (working set, anon) and each Node's
# pods (working set), MiB, from step status's files.
memory() {
  local st=$share/status.json f
  [ -s "$st" ] || { echo "cost: no $st (step status did not run)"; return 0; }
  echo "Memory at step status, MiB: each partition's services (working set / anon: their own heap and stacks) and its daemons' sum against kube_reserved_memory:"
  jq -r '.partitions[] | .name as $p |
    ([.units[] | select(.usage) | "\(.name | sub("\\.service$"; "")) \(.usage.memoryWorkingSetBytes / 1048576 | floor)/\(.usage.memoryAnonBytes // 0 | . / 1048576 | floor)"] | join("  ")) as $u |
    "\($p)  \($u)  = \(.daemons.memoryWorkingSetBytes // 0 | . / 1048576 | floor)/\(.daemons.memoryAnonBytes // 0 | . / 1048576 | floor) of \(.daemons.kubeReservedMemoryBytes // 0 | . / 1048576 | floor)"' "$st"
  for f in "$share"/summary-*.json; do
    [ -s "$f" ] || continue
    echo "Pods of $(jq -r .node.nodeName "$f") (working set, MiB):"
    jq -r '.pods[] | "  \(.memory.workingSetBytes // 0 | . / 1048576 | floor)\t\(.podRef.namespace)/\(.podRef.name)"' "$f" | sort -rn
  done
}

[ -s "$cpu" ] || { echo "cost: no $cpu (a scenario before cpu_snapshot, or no step ran)"; memory; exit 0; }

echo "CPU seconds by the boot's end, top-level cgroups and their biggest services:"
awk -F'\t' '{last[$2] = $3} END {for (c in last) printf "%9.1f  %s\n", last[c], c}' "$cpu" \
  | sort -rn | head -n 14

echo "CPU seconds per step (the machine's busy time; the top-level cgroups' sum), and the three cgroups below them that used the most in it:"
awk -F'\t' '
  { if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 }
    now[$1, $2] = $3; cg[$2] = 1 }
  END {
    for (i = 1; i <= n; i++) {
      s = order[i]; total = 0; machine = 0; delete d
      for (c in cg) {
        if (!((s, c) in now)) continue
        prev = (i > 1 && (order[i-1], c) in now) ? now[order[i-1], c] : 0
        d[c] = now[s, c] - prev
        if (d[c] < 0) d[c] = now[s, c]   # a cgroup made anew (a restarted unit)
        if (c == "(machine)") { machine = d[c]; delete d[c] }
        else if (split(c, parts, "/") <= 2) total += d[c]   # "x.slice/": top level
      }
      line = ""
      for (k = 1; k <= 3; k++) {
        best = ""; bv = -1
        for (c in d) if (split(c, parts, "/") > 2 && d[c] > bv) { best = c; bv = d[c] }
        if (best == "") break
        line = line sprintf("  %s %.0f", best, bv); delete d[best]
      }
      printf "%-16s %8.1f %8.1f %s\n", s, machine, total, line
    }
  }' "$cpu"

memory
# Inside each containerd service at the last step: containerd itself, its
# shims and what the shims waited for (runc), from share/procs.tsv
# (scenario.sh proc_snapshot); the rest of the service's CPU went to
# processes gone by then (shims of deleted pods, the CNI plugins, ctr).
procs=$share/procs.tsv
if [ -s "$procs" ]; then
  echo "Inside the containerd services at the last step, CPU seconds (self; children waited for):"
  awk -F'\t' '{last = $1} {row[NR] = $0} END {
    for (i = 1; i <= NR; i++) { split(row[i], f, "\t"); if (f[1] != last) continue
      k = f[2] SUBSEP (f[4] ~ /^containerd-shim/ ? "shims" : f[4]); self[k] += f[5]; kids[k] += f[6]; n[k]++ }
    for (k in self) { split(k, p, SUBSEP); printf "  %-40s %-16s %3d %8.1f %8.1f\n", p[1], p[2], n[k], self[k], kids[k] } }' "$procs" | sort
fi
[ -s "$kc" ] || exit 0
echo "kubectl calls per step (count, wall seconds; a process each, its start most of its cost under TCG):"
awk -F'\t' '{sub(/\.sh$/, "", $1); n[$1]++; t[$1] += $3; all += $3; cnt++}
  END {for (s in n) printf "%-16s %4d %8.1f\n", s, n[s], t[s]; printf "%-16s %4d %8.1f\n", "(all)", cnt, all}' "$kc" \
  | sort -k3 -rn
