#!/usr/bin/env bash
# Installs a numa-partition .deb into a scratch root with dpkg (no chroot,
# maintainer scripts run against the scratch root) and checks that every
# file landed where an operator expects it, with the right modes, and that
# the packaged binary runs.
set -euo pipefail
deb=${1:?usage: test-deb.sh PACKAGE.deb}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"

fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }

dpkg --root="$root" --force-script-chrootless --force-depends --force-not-root \
  --log=/dev/null -i "$deb" >/dev/null

check "package registered as installed" \
  "dpkg --root='$root' -s numa-partition 2>/dev/null | grep -q '^Status: install ok installed'"
check "binary at /usr/bin, mode 0755" "[ \"\$(stat -c %a '$root/usr/bin/numa-partition')\" = 755 ]"
check "binary runs and prints its version" "'$root/usr/bin/numa-partition' version | grep -q '^numa-partition '"
check "man page, gzipped, section 8" "zcat '$root/usr/share/man/man8/numa-partition.8.gz' | grep -q '^.TH numa-partition 8'"
check "bash completion" "grep -q 'complete .*numa-partition' '$root/usr/share/bash-completion/completions/numa-partition'"
check "zsh completion" "grep -q '^#compdef numa-partition' '$root/usr/share/zsh/vendor-completions/_numa-partition'"
check "fish completion" "grep -q 'complete -c numa-partition' '$root/usr/share/fish/vendor_completions.d/numa-partition.fish'"
check "default config is a conffile" "grep -qx '/etc/numa-partition/config.toml' '$root/var/lib/dpkg/info/numa-partition.conffiles'"
check "default config installed" "[ -s '$root/etc/numa-partition/config.toml' ]"
# The packaged default must plan as is on a real machine (a dump in testdata).
sysfs=$(cd "$(dirname "$0")/.." && pwd)/testdata/sysfs/hwloc-32amd64-4s2n4c-cgroup2/sys
check "default config plans on a real 4-socket dump" \
  "'$root/usr/bin/numa-partition' --sysfs '$sysfs' --config '$root/etc/numa-partition/config.toml' config check --hostname deb-test"
check "boot-time apply unit" "grep -q '^ExecStart=/usr/bin/numa-partition .*apply' '$root/lib/systemd/system/numa-partition.service'"
check "boot-time apply unit is a oneshot" "grep -q '^Type=oneshot' '$root/lib/systemd/system/numa-partition.service'"
if command -v systemd-analyze >/dev/null; then
  # verify needs the distro's unit tree (sysinit.target, ...) beside ours;
  # any output at all is a failure (bad keys are only warnings there).
  vroot=$(mktemp -d)
  mkdir -p "$vroot/lib/systemd" "$vroot/usr/bin" "$vroot/etc/numa-partition"
  cp -a /lib/systemd/system "$vroot/lib/systemd/"
  cp "$root/lib/systemd/system/numa-partition.service" "$vroot/lib/systemd/system/"
  cp "$root/usr/bin/numa-partition" "$vroot/usr/bin/"
  cp "$root/etc/numa-partition/config.toml" "$vroot/etc/numa-partition/"
  out=$(systemd-analyze verify --root="$vroot" --man=no numa-partition.service 2>&1 || echo "exit status $?")
  rm -rf "$vroot"
  check "unit verifies with systemd-analyze, no output" "[ -z \"\$out\" ] || { echo \"\$out\"; false; }"
else
  echo "FAIL: systemd-analyze missing (install systemd)"; fail=1
fi
# Nothing outside the expected tree.
unexpected=$(dpkg --root="$root" -L numa-partition | grep -v -E '^/(\.|usr(/bin|/share(/man(/man8)?|/bash-completion(/completions)?|/zsh(/vendor-completions)?|/fish(/vendor_completions.d)?|/doc(/numa-partition)?)?)?|etc(/numa-partition)?|lib(/systemd(/system)?)?)(/[^/]*)?$' || true)
check "no unexpected paths" "[ -z \"\$unexpected\" ] || { echo \"\$unexpected\"; false; }"
dpkg --root="$root" --force-script-chrootless --force-not-root --log=/dev/null -r numa-partition >/dev/null
check "removal keeps the conffile (operator's config)" "[ -f '$root/etc/numa-partition/config.toml' ]"
check "removal removes the binary" "[ ! -e '$root/usr/bin/numa-partition' ]"
if [ $fail -ne 0 ]; then echo "test-deb: FAILED"; exit 1; fi
echo "test-deb: all checks passed"
