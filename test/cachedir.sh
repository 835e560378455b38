#!/usr/bin/env bash
# cachedir.sh — the one place that says where the heavy test builds are
# cached: outside the clone, so that a fresh clone (CI's) reuses what an
# earlier session or run built. Each cache inside is keyed by a hash of its
# inputs, so clones of different trees share it safely.
#   NUMA_PARTITION_CACHE  the folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/numa-partition)
# Sourced by test/realbin/build.sh, test/addons/build.sh and test/e2e/*.sh;
# run alone it prints the folder.
np_cache=${NUMA_PARTITION_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/numa-partition}
if [ "${BASH_SOURCE[0]}" = "$0" ]; then echo "$np_cache"; fi
