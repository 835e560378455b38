#!/usr/bin/env bash
# The numa-partition .deb's life in a scratch root with dpkg (no chroot:
# maintainer scripts run against the scratch root through DPKG_ROOT, which
# deb-systemd-helper honours): install, upgrade twice (the same package
# repacked at higher versions), remove, purge, checking after each step
# what it leaves. Then lintian: no error, and no warning that
# packaging/lintian-overrides does not explain.
#
# What must hold: installing changes nothing on the host until the
# operator has applied once (no config under /etc, the boot unit skipped
# without apply's record); an upgrade keeps the operator's config, apply's
# record and the operator's enable/disable; removal and purge take the
# package's files and the unit's enablement away and nothing of the
# operator's or of apply's.
set -euo pipefail
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
# dpkgr ARGS: dpkg on the scratch root, quiet unless it fails (systemd,
# the dependency, is the host's, not the scratch root's).
dpkgr() {
  dpkg --root="$root" --force-script-chrootless --force-depends --force-not-root --log=/dev/null "$@" >"$work/dpkg.log" 2>&1 \
    || { cat "$work/dpkg.log"; echo "FAIL: dpkg $*"; exit 1; }
}
status() { dpkg-query --root="$root" -W -f='${Status} ${Version}' numa-partition 2>/dev/null || echo "unknown"; }
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
unexpected=$(dpkg --root="$root" -L numa-partition | grep -v -E '^/(\.|usr(/bin|/share(/man(/man8)?|/bash-completion(/completions)?|/zsh(/vendor-completions)?|/fish(/vendor_completions.d)?|/doc(/numa-partition)?|/numa-partition|/lintian(/overrides)?)?)?|lib(/systemd(/system)?)?)(/[^/]*)?$' || true)
check "no unexpected paths (nothing under /etc)" "[ -z \"\$unexpected\" ] || { echo \"\$unexpected\"; false; }"

# The operator writes a config and applies once (the record stands in).
mkdir -p "$root/etc/numa-partition" "$root$(dirname "$record")"
echo '# the operator'"'"'s' > "$root$config"
echo '{"generation": 1}' > "$root$record"
sums() { sha256sum "$root$config" "$root$record"; }
before=$(sums)

echo "== upgrade $v1 -> $v2"
dpkgr -i "$work/v2.deb"
check "registered as installed at $v2" "[ \"\$(status)\" = 'install ok installed $v2' ]"
check "binary still runs" "'$root/usr/bin/numa-partition' version | has '^numa-partition '"
check "operator's config and apply's record untouched" "[ \"\$(sums)\" = \"\$before\" ]"
check "still enabled" "[ \"\$(readlink '$root$wants')\" = '$unit' ]"

echo "== operator disables, upgrade $v2 -> $v3"
systemctl --root="$root" --quiet disable numa-partition.service
check "disabled" "[ ! -L '$root$wants' ]"
dpkgr -i "$work/v3.deb"
check "registered as installed at $v3" "[ \"\$(status)\" = 'install ok installed $v3' ]"
check "upgrade keeps the operator's disable" "[ ! -L '$root$wants' ]"
check "operator's config and apply's record untouched" "[ \"\$(sums)\" = \"\$before\" ]"
systemctl --root="$root" --quiet enable numa-partition.service

echo "== remove"
dpkgr -r numa-partition
check "left as config-files (postrm purge still to run)" "[ \"\$(status)\" = 'deinstall ok config-files $v3' ]"
check "binary gone" "[ ! -e '$root/usr/bin/numa-partition' ]"
check "unit file gone" "[ ! -e '$root$unit' ]"
check "example config gone" "[ ! -e '$root/usr/share/numa-partition' ]"
check "unit masked: its leftover enable link starts nothing" "[ \"\$(readlink '$root$mask')\" = /dev/null ]"
check "operator's config and apply's record kept (remove needs them)" "[ \"\$(sums)\" = \"\$before\" ]"

echo "== purge"
dpkgr -P numa-partition
check "not installed" "[ \"\$(status)\" = unknown ] || status | has '^unknown ok not-installed'"
check "mask gone" "[ ! -L '$root$mask' ]"
check "enable link gone" "[ ! -L '$root$wants' ]"
check "deb-systemd-helper's state gone" "[ ! -e '$root$dsh_state' ]"
check "operator's config and apply's record still kept" "[ \"\$(sums)\" = \"\$before\" ]"
check "no file of the package left" "[ ! -e '$root/usr/share/doc/numa-partition' ] && [ ! -e '$root/usr/share/man/man8/numa-partition.8.gz' ]"

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
