#!/usr/bin/env bash
# setup.sh — install what `make e2e` needs on a Debian 12 host, from Debian
# packages only: QEMU (TCG is enough), kmod (depmod/modprobe to pick the
# kernel modules), cpio (initramfs), debootstrap (the guest's root), iproute2
# (ip netns, bridge and taps of the lab), openssl and curl (the control
# plane's throw-away PKI and bootstrap objects). No recommends.
set -euo pipefail
pkgs=(qemu-system-x86 kmod cpio debootstrap iproute2 openssl curl)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "e2e setup: ${pkgs[*]} already installed"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "e2e setup: missing packages ${missing[*]}; run as root: apt-get install --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "e2e setup: installed ${missing[*]}"
