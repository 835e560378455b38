#!/usr/bin/env bash
# The numa-partition .deb's life in a scratch root with dpkg (no chroot:
# maintainer scripts run against the scratch root through DPKG_ROOT, which
# deb-systemd-helper honours): install, upgrade twice (the same package
# repacked at higher versions) and reinstall the same version, remove
# (refused while apply's record exists, forced, and allowed without it),
# purge, checking after each step what it leaves. Then lintian: no error,
# and no warning that packaging/lintian-overrides does not explain.
#
# What must hold: installing changes nothing on the host until the
# operator has applied once (no config under /etc, the boot unit skipped
# without apply's record); an upgrade keeps the operator's config, apply's
# record and the operator's enable/disable, and starts, stops or restarts
# no unit (every systemctl, deb-systemd-invoke, invoke-rc.d and service
# call of the maintainer scripts is logged by a shim and checked, also
# for postinst run as on a live host); removal is refused while
# partitions are applied (apply's record exists) unless
# NUMA_PARTITION_FORCE_REMOVE=1; removal and purge take the package's
# files and the unit's enablement away and nothing of the operator's or
# of apply's.
set -euo pipefail
unset NUMA_PARTITION_FORCE_REMOVE
deb=${1:?usage: test-deb.sh PACKAGE.deb}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"

fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }
# has [GREP-OPTIONS] PATTERN: stdin matches. It reads stdin to its end
# first: "producer | grep -q" under pipefail fails whenever grep exits on
# the first match before the producer has written its last block (SIGPIPE),
# which made the man page check fail at random.
has() { local in; in=$(cat); grep -q "$@" <<<"$in"; }
# Shims for the commands that start, stop or restart units: each call a
# maintainer script makes is logged in $calls (and never reaches the
# host). $shim has them; $hostshim also deb-systemd-helper, for postinst
# run as on a live host (below).
calls=$work/calls.log
shim=$work/shim
hostshim=$work/hostshim
mkdir -p "$shim" "$hostshim"
for c in systemctl deb-systemd-invoke invoke-rc.d service deb-systemd-helper; do
  for d in "$shim" "$hostshim"; do
    [ "$c" = deb-systemd-helper ] && [ "$d" = "$shim" ] && continue
    printf '#!/bin/sh\necho "%s $*" >> "%s"\nexit 0\n' "$c" "$calls" > "$d/$c"
    chmod +x "$d/$c"
  done
done
: > "$calls"
# no_restart: what $calls logged since the last check holds no call that
# starts, stops, restarts or reloads a unit (daemon-reload only re-reads
# unit files), and no deb-systemd-invoke/invoke-rc.d/service at all.
no_restart() {
  local bad
  bad=$(grep -E '^(deb-systemd-invoke|invoke-rc\.d|service) |^systemctl .*(^| )(start|stop|restart|try-restart|reload|reload-or-restart|try-reload-or-restart|condrestart|force-reload|kill|isolate)( |$)' "$calls" || true)
  [ -z "$bad" ] || { echo "$bad"; return 1; }
}
# dpkgr ARGS: dpkg on the scratch root, quiet unless it fails (systemd,
# the dependency, is the host's, not the scratch root's); the shims first
# in PATH.
dpkgr() {
  PATH="$shim:$PATH" dpkg --root="$root" --force-script-chrootless --force-depends --force-not-root --log=/dev/null "$@" >"$work/dpkg.log" 2>&1 \
    || { cat "$work/dpkg.log"; echo "FAIL: dpkg $*"; exit 1; }
}
# dpkgr_refused ARGS: the same, where dpkg must fail; its output is kept
# in $work/dpkg.log.
dpkgr_refused() {
  if PATH="$shim:$PATH" dpkg --root="$root" --force-script-chrootless --force-depends --force-not-root --log=/dev/null "$@" >"$work/dpkg.log" 2>&1; then
    cat "$work/dpkg.log"; echo "FAIL: dpkg $* succeeded"; exit 1
  fi
}
status() { dpkg-query --root="$root" -W -f='${Status} ${Version}' numa-partition 2>/dev/null || echo "unknown"; }
# installed_at VERSION: installed, whatever the selection (a refused
# dpkg -r leaves it at deinstall).
installed_at() { case "$(status)" in "install ok installed $1" | "deinstall ok installed $1") return 0 ;; esac; return 1; }
# repack DEB VERSION OUT: the same package at another version.
repack() {
  rm -rf "$work/x"
  dpkg-deb -R "$1" "$work/x"
  sed -i "s/^Version: .*/Version: $2/" "$work/x/DEBIAN/control"
  dpkg-deb --root-owner-group -b "$work/x" "$3" >/dev/null
}

unit=/lib/systemd/system/numa-partition.service
wants=/etc/systemd/system/multi-user.target.wants/numa-partition.service
mask=/etc/systemd/system/numa-partition.service
dsh_state=/var/lib/systemd/deb-systemd-helper-enabled/numa-partition.service.dsh-also
# apply's record and the config path, from the binary that uses them.
record=$(grep -m1 '^ConditionPathExists=/var/' "$repo/packaging/numa-partition.service" | cut -d= -f2)
config=/etc/numa-partition/config.toml
host_link_before=$( [ -e "$wants" ] || [ -L "$wants" ] && echo yes || echo no)

v1=$(dpkg-deb -f "$deb" Version)
v2=$v1+test2
v3=$v1+test3
repack "$deb" "$v2" "$work/v2.deb"
repack "$deb" "$v3" "$work/v3.deb"

echo "== install $v1"
dpkgr -i "$deb"
check "registered as installed" "[ \"\$(status)\" = 'install ok installed $v1' ]"
check "binary at /usr/bin, mode 0755" "[ \"\$(stat -c %a '$root/usr/bin/numa-partition')\" = 755 ]"
check "binary runs and prints its version" "'$root/usr/bin/numa-partition' version | has '^numa-partition '"
check "binary is stripped (no symbol table)" "! readelf -S '$root/usr/bin/numa-partition' | has -E '\\.symtab|\\.debug_'"
check "man page, gzipped, section 8" "zcat '$root/usr/share/man/man8/numa-partition.8.gz' | has '^.TH numa-partition 8'"
check "bash completion" "grep -q 'complete .*numa-partition' '$root/usr/share/bash-completion/completions/numa-partition'"
check "zsh completion" "grep -q '^#compdef numa-partition' '$root/usr/share/zsh/vendor-completions/_numa-partition'"
check "fish completion" "grep -q 'complete -c numa-partition' '$root/usr/share/fish/vendor_completions.d/numa-partition.fish'"
check "copyright, machine-readable" "grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' '$root/usr/share/doc/numa-partition/copyright'"
# What the man page's SEE ALSO promises ("README.md, docs/") is there, with
# every doc the README links and the examples they name.
for f in README.md docs/apply.md docs/config-reference.md docs/scale.md examples/drain-rbac.yaml examples/4socket/config.toml; do
  check "/usr/share/doc/numa-partition/$f shipped as in the repository" "cmp -s '$repo/$f' '$root/usr/share/doc/numa-partition/$f'"
done
check "changelog's top entry is this version" "zcat '$root/usr/share/doc/numa-partition/changelog.gz' | sed -n 1p | has -F 'numa-partition ($v1)'"
check "no config under /etc: nothing to apply" "[ ! -e '$root$config' ] && [ ! -e '$root/etc/numa-partition' ]"
check "no conffiles" "[ ! -s '$root/var/lib/dpkg/info/numa-partition.conffiles' ]"
check "example config under /usr/share" "[ -s '$root/usr/share/numa-partition/config.toml' ]"
# The example must plan as is on a real machine (a dump in testdata).
sysfs=$repo/testdata/sysfs/hwloc-32amd64-4s2n4c-cgroup2/sys
check "example config plans on a real 4-socket dump" \
  "'$root/usr/bin/numa-partition' --sysfs '$sysfs' --config '$root/usr/share/numa-partition/config.toml' config check --hostname deb-test"
check "boot unit: a oneshot that applies" "grep -q '^Type=oneshot' '$root$unit' && grep -q '^ExecStart=/usr/bin/numa-partition .*apply' '$root$unit'"
check "boot unit runs only once apply wrote its record" "[ -n '$record' ] && grep -qx 'ConditionPathExists=$record' '$root$unit'"
check "boot unit runs only with a config" "grep -qx 'ConditionPathExists=$config' '$root$unit'"
check "the record is apply's (named by the binary's own docs)" "'$root/usr/bin/numa-partition' apply --help | grep -F '$record' >/dev/null"
check "boot unit enabled in the scratch root (deb-systemd-helper)" "[ \"\$(readlink '$root$wants')\" = '$unit' ]"
check "the host itself untouched" "[ \$( [ -e '$wants' ] || [ -L '$wants' ] && echo yes || echo no) = '$host_link_before' ]"
check "no apply record, no state: nothing was applied" "[ ! -e '$root$record' ] && [ ! -e '$root/var/lib/numa-partition' ]"
if command -v systemd-analyze >/dev/null; then
  # verify needs the distro's unit tree (sysinit.target, ...) beside ours;
  # any output at all is a failure (bad keys are only warnings there).
  vroot=$work/verify
  mkdir -p "$vroot/lib/systemd" "$vroot/usr/bin"
  cp -a /lib/systemd/system "$vroot/lib/systemd/"
  cp "$root$unit" "$vroot/lib/systemd/system/"
  cp "$root/usr/bin/numa-partition" "$vroot/usr/bin/"
  out=$(systemd-analyze verify --root="$vroot" --man=no numa-partition.service 2>&1 || echo "exit status $?")
  check "unit verifies with systemd-analyze, no output" "[ -z \"\$out\" ] || { echo \"\$out\"; false; }"
else
  echo "FAIL: systemd-analyze missing (install systemd)"; fail=1
fi
# Nothing outside the expected tree.
# shellcheck disable=SC2034 # read by check's eval
unexpected=$(dpkg --root="$root" -L numa-partition | grep -v -E '^/(\.|usr(/bin|/share(/man(/man8)?|/bash-completion(/completions)?|/zsh(/vendor-completions)?|/fish(/vendor_completions.d)?|/doc(/numa-partition)?|/numa-partition|/lintian(/overrides)?)?)?|lib(/systemd(/system)?)?)(/[^/]*)?$' |
  grep -v -E '^/usr/share/doc/numa-partition/(docs|examples)(/.*)?$' || true)
check "no unexpected paths (nothing under /etc)" "[ -z \"\$unexpected\" ] || { echo \"\$unexpected\"; false; }"
for s in prerm postinst postrm; do
  check "$s looks for apply's record, below DPKG_ROOT" "grep -qF '\${DPKG_ROOT:-}$record' '$root/var/lib/dpkg/info/numa-partition.$s'"
done
check "install started, stopped or restarted nothing" "no_restart"

# The operator writes a config and applies once (the record stands in).
mkdir -p "$root/etc/numa-partition" "$root$(dirname "$record")"
echo '# the operator'"'"'s' > "$root$config"
echo '{"generation": 1}' > "$root$record"
sums() { sha256sum "$root$config" "$root$record"; }
# shellcheck disable=SC2034 # read by check's eval
before=$(sums)

echo "== upgrade $v1 -> $v2, partitions applied"
: > "$calls"
dpkgr -i "$work/v2.deb"
check "registered as installed at $v2" "[ \"\$(status)\" = 'install ok installed $v2' ]"
check "binary still runs" "'$root/usr/bin/numa-partition' version | has '^numa-partition '"
check "operator's config and apply's record untouched" "[ \"\$(sums)\" = \"\$before\" ]"
check "still enabled" "[ \"\$(readlink '$root$wants')\" = '$unit' ]"
check "upgrade started, stopped or restarted nothing" "no_restart"
check "upgrade says nothing was restarted and how to see what re-applying changes" \
  "has -F 'nothing was restarted' < '$work/dpkg.log' && has -F 'numa-partition apply --dry-run' < '$work/dpkg.log'"

echo "== reinstall $v2 over itself"
: > "$calls"
dpkgr -i "$work/v2.deb"
check "registered as installed at $v2" "[ \"\$(status)\" = 'install ok installed $v2' ]"
check "operator's config and apply's record untouched" "[ \"\$(sums)\" = \"\$before\" ]"
check "still enabled" "[ \"\$(readlink '$root$wants')\" = '$unit' ]"
check "reinstall started, stopped or restarted nothing" "no_restart"

# postinst configure as on a live host (no DPKG_ROOT), every command it
# may run shimmed, in a mount namespace whose /run is a fresh tmpfs: once
# with systemd as PID 1 (/run/systemd/system), once without (a chroot).
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
  for pid1 in systemd none; do
    : > "$calls"
    # shellcheck disable=SC2016 # the inner script's own arguments
    out=$(env -u DPKG_ROOT PATH="$hostshim:$PATH" unshare -m sh -c '
      mount -t tmpfs none /run && { [ "$1" = none ] || mkdir -p /run/systemd/system; } &&
      sh "$2" configure "$3"' sh "$pid1" "$root/var/lib/dpkg/info/numa-partition.postinst" "$v1" 2>&1) \
      || { echo "$out"; echo "FAIL: postinst configure (systemd: $pid1)"; fail=1; }
    check "live-host postinst (systemd: $pid1) started, stopped or restarted nothing" "no_restart"
    if [ $pid1 = systemd ]; then
      check "live-host postinst (systemd) reloads systemd's unit files, and that is all systemctl does" \
        "[ \"\$(grep '^systemctl ' '$calls')\" = 'systemctl --system daemon-reload' ]"
    else
      check "live-host postinst (no systemd) runs no systemctl" "! grep -q '^systemctl ' '$calls'"
    fi
  done
else
  echo "SKIP: live-host postinst (needs root and unshare -m)"
fi

echo "== operator disables, upgrade $v2 -> $v3"
: > "$calls"
systemctl --root="$root" --quiet disable numa-partition.service
check "disabled" "[ ! -L '$root$wants' ]"
dpkgr -i "$work/v3.deb"
check "registered as installed at $v3" "[ \"\$(status)\" = 'install ok installed $v3' ]"
check "upgrade keeps the operator's disable" "[ ! -L '$root$wants' ]"
check "upgrade started, stopped or restarted nothing" "no_restart"
check "operator's config and apply's record untouched" "[ \"\$(sums)\" = \"\$before\" ]"
systemctl --root="$root" --quiet enable numa-partition.service

echo "== remove while partitions are applied: refused"
: > "$calls"
dpkgr_refused -r numa-partition
check "prerm says why and how to run numa-partition remove first" \
  "has -F 'refusing to remove the package: partitions are applied' < '$work/dpkg.log' && has -F 'numa-partition remove --drain' < '$work/dpkg.log' && has -F 'NUMA_PARTITION_FORCE_REMOVE=1' < '$work/dpkg.log'"
# dpkg -r has set the selection to deinstall; the package stays installed.
check "still installed at $v3" "installed_at '$v3'"
check "binary still there" "[ -x '$root/usr/bin/numa-partition' ]"
check "still enabled, not masked" "[ \"\$(readlink '$root$wants')\" = '$unit' ] && [ ! -L '$root$mask' ]"
check "operator's config and apply's record untouched" "[ \"\$(sums)\" = \"\$before\" ]"
check "the refusal started, stopped or restarted nothing" "no_restart"
# A link at the record's path counts, and is not followed: a dangling one too.
mv "$root$record" "$work/record"
ln -s /nonexistent/applied.json "$root$record"
dpkgr_refused -r numa-partition
check "a dangling link at the record's path refuses too" "has -F 'refusing to remove the package' < '$work/dpkg.log' && installed_at '$v3'"
rm "$root$record"
mv "$work/record" "$root$record"

echo "== remove while partitions are applied, NUMA_PARTITION_FORCE_REMOVE=1"
NUMA_PARTITION_FORCE_REMOVE=1 dpkgr -r numa-partition
check "removed, with a warning that the partitions stay" "has -F 'removing the package anyway' < '$work/dpkg.log'"
check "left as config-files (postrm purge still to run)" "[ \"\$(status)\" = 'deinstall ok config-files $v3' ]"
check "binary gone" "[ ! -e '$root/usr/bin/numa-partition' ]"
check "unit file gone" "[ ! -e '$root$unit' ]"
check "example config gone" "[ ! -e '$root/usr/share/numa-partition' ]"
check "unit masked: its leftover enable link starts nothing" "[ \"\$(readlink '$root$mask')\" = /dev/null ]"
check "operator's config and apply's record kept (remove needs them)" "[ \"\$(sums)\" = \"\$before\" ]"

echo "== purge, partitions still applied"
dpkgr -P numa-partition
check "purge says the partitions are still applied and kept" "has -F 'partitions are still applied' < '$work/dpkg.log'"
check "not installed" "[ \"\$(status)\" = unknown ] || status | has '^unknown ok not-installed'"
check "mask gone" "[ ! -L '$root$mask' ]"
check "enable link gone" "[ ! -L '$root$wants' ]"
check "deb-systemd-helper's state gone" "[ ! -e '$root$dsh_state' ]"
check "operator's config and apply's record still kept" "[ \"\$(sums)\" = \"\$before\" ]"
check "no file of the package left" "[ ! -e '$root/usr/share/doc/numa-partition' ] && [ ! -e '$root/usr/share/man/man8/numa-partition.8.gz' ]"
check "remove and purge started, stopped or restarted nothing" "no_restart"

echo "== install, numa-partition remove (the record goes), remove, purge"
dpkgr -i "$deb"
check "registered as installed" "[ \"\$(status)\" = 'install ok installed $v1' ]"
rm "$root$record"
dpkgr -r numa-partition
check "remove allowed without the record, silently" "[ \"\$(status)\" = 'deinstall ok config-files $v1' ] && ! has -E 'refusing|warning|applied' < '$work/dpkg.log'"
dpkgr -P numa-partition
check "purged" "[ \"\$(status)\" = unknown ] || status | has '^unknown ok not-installed'"
check "operator's config kept" "[ -s '$root$config' ]"
check "nothing started, stopped or restarted" "no_restart"

echo "== lintian"
if command -v lintian >/dev/null; then
  # --fail-on error: errors fail here; warnings are printed and checked
  # below against the overrides file, each with its reason.
  lout=$(lintian --fail-on error --tag-display-limit 0 "$deb" 2>&1) || { echo "$lout"; echo "FAIL: lintian reports errors"; fail=1; }
  [ -z "$lout" ] || echo "$lout"
  check "lintian: no error and no unexplained warning" "! printf '%s\n' \"\$lout\" | has -E '^[EW]: '"
else
  echo "FAIL: lintian missing (apt-get install lintian)"; fail=1
fi

if [ $fail -ne 0 ]; then echo "test-deb: FAILED"; exit 1; fi
echo "test-deb: all checks passed"
