#!/usr/bin/env bash
# image.sh — build (once) the e2e VM's kernel and root filesystem from Debian
# packages only, and print the directory that holds them.
#
# Output, cached under $np_cache/e2e/image-<key>/ (test/cachedir.sh) where <key> hashes this script
# (change the recipe and the image is rebuilt, otherwise it is reused):
#   vmlinuz      Debian's stock kernel (linux-image-amd64's current ABI)
#   base.cpio    debootstrapped bookworm + the few kernel modules the guest
#                needs, packed as an initramfs whose own root runs systemd as
#                PID 1 (boots v1 and n4: no disk), or whose /sbin/e2e-init
#                moves the root onto the VM's disk first (boot v2, which
#                reboots: step reboot)
#   manifest.txt kernel version and the guest's package list
#
# Why an initramfs-as-root: no partitioning tools, no loop mounts on the
# host; the kernel unpacks it straight into RAM, and each run appends a
# small payload archive (binaries, scenario) to it. A boot that must
# survive a reboot gets a blank sparse file as its disk, which the guest
# formats and copies the initramfs onto at its first boot (e2e-init).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/test/cachedir.sh"
cache=${E2E_CACHE:-$np_cache/e2e}
key=$(sha256sum < "$0" | cut -c1-16)
out=$cache/image-$key
log() { echo "e2e image: $*" >&2; }

# cached [WHY]: print the image and stop when it is built.
cached() {
  [ -f "$out/base.cpio" ] && [ -f "$out/vmlinuz" ] || return 0
  log "cached $out${1:+ ($1)}"
  echo "$out"
  exit 0
}
cached
[ "$(id -u)" = 0 ] || { log "building the image needs root (debootstrap, device nodes); run as root"; exit 1; }
for t in debootstrap cpio depmod modprobe dpkg apt-get; do
  command -v "$t" >/dev/null || { log "missing $t: run test/e2e/setup.sh"; exit 1; }
done

mkdir -p "$cache"
# One build at a time (.ci/run starts one early, in the background, and
# run.sh asks again): a second waits for the first, then finds it built.
exec 9>"$cache/image.lock"
flock 9
cached "built while waiting"
# Drop images built by other versions of this recipe.
find "$cache" -maxdepth 1 -name 'image-*' ! -name "image-$key" -exec rm -rf {} +
work=$(mktemp -d "$cache/build-XXXXXX")
trap 'rm -rf "$work"' EXIT
t0=$SECONDS

# --- kernel: the package linux-image-amd64 currently points at; only the
# vmlinuz and a handful of modules are kept (the .deb unpacks to ~400 MB).
kpkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
[ -n "$kpkg" ] || { log "cannot resolve linux-image-amd64 (apt-get update?)"; exit 1; }
log "kernel package $kpkg"
# As root into a private directory: no _apt sandbox user to hand it to.
(cd "$work" && apt-get -o APT::Sandbox::User=root download -q "$kpkg" >/dev/null)
dpkg -x "$work"/"$kpkg"_*.deb "$work/kernel"
kver=$(ls "$work/kernel/lib/modules")
log "kernel $kver unpacked ($((SECONDS - t0)) s)"

# --- root: minbase + systemd/dbus, jq for the scenario's JSON checks,
# runc and the CNI plugins for the partitions' containerd 2 (built from the
# Go module proxy, in the payload: Debian's containerd is 1.6), iproute2
# for the link to the API server on the host.
mirror=${E2E_MIRROR:-$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}
mirror=${mirror:-http://deb.debian.org/debian}
root=$work/root
log "debootstrap bookworm from $mirror (about 2 minutes)"
debootstrap --variant=minbase \
  --include=systemd,systemd-sysv,dbus,procps,jq,runc,containernetworking-plugins,iproute2,iptables,kmod,e2fsprogs \
  bookworm "$root" "$mirror" > "$work/debootstrap.log" 2>&1 \
  || { tail -30 "$work/debootstrap.log" >&2; log "debootstrap failed"; exit 1; }
log "debootstrap done ($((SECONDS - t0)) s)"

# Trim what a test VM never reads; every MB is unpacked into guest RAM.
rm -rf "$root"/usr/share/{doc,man,locale,info}/* "$root"/var/cache/apt/* \
       "$root"/var/lib/apt/lists/*

# Kernel modules: minbase has no udev, so nothing is loaded by modalias;
# virtio-pci + 9p carry the host share, overlay serves containerd,
# virtio_net is the link to the API server, veth the pods' CNI (ptp) and
# the partitions' links, bridge and macvlan their uplinks, nf_tables + masquerade its
# NAT towards the API server; then what kube-proxy's nftables mode uses
# (conntrack, DNAT, random endpoint choice, fib, reject), what flannel
# uses (vxlan between the partitions, br_netfilter so that a Service's
# reply from a pod on the same cni0 bridge is un-NATed, as kubeadm's
# preflight requires) and what iptables-nft needs for the CNI portmap
# plugin's chains (nft_compat, xt_*); fuse serves each partition's
# /proc/meminfo (numa-partition view hold); virtio_pmem, nd_pmem and
# ext4 the persistent memory a rebooting boot's root lives on (e2e-init).
mods="fuse virtio_pci virtio_pmem nd_pmem ext4 9pnet_virtio 9p overlay virtio_net veth bridge macvlan nf_tables nft_chain_nat nft_masq
  nft_ct nft_nat nft_numgen nft_fib_inet nft_fib_ipv4 nft_fib_ipv6 nft_reject_inet nft_reject_ipv4 nft_reject_ipv6 nft_limit
  vxlan br_netfilter nft_compat xt_comment xt_mark xt_conntrack xt_MASQUERADE xt_addrtype xt_multiport xt_nat"
depmod -b "$work/kernel" "$kver"
for m in $mods; do
  modprobe -d "$work/kernel" -S "$kver" --show-depends "$m" | awk '$1=="insmod"{print $2}'
done | sort -u | while read -r ko; do
  rel=${ko#"$work/kernel"}
  mkdir -p "$root$(dirname "$rel")"
  cp "$ko" "$root$rel"
done
cp "$work/kernel/lib/modules/$kver"/modules.{order,builtin,builtin.modinfo} "$root/lib/modules/$kver/"
depmod -b "$root" "$kver"
printf '%s\n' $mods > "$root/etc/modules-load.d/e2e.conf"

sd=$root/etc/systemd/system
mkdir -p "$root/mnt/share" "$root/e2e"
# The host share (results out, nothing in: the payload is in the initramfs).
cat > "$sd/mnt-share.mount" <<'UNIT'
[Unit]
Description=e2e host share (virtio 9p)
After=systemd-modules-load.service
Requires=systemd-modules-load.service
# Without the share no result can come back: end the VM instead of idling
# until the host's timeout.
FailureAction=poweroff-force
[Mount]
What=share
Where=/mnt/share
Type=9p
Options=trans=virtio,version=9p2000.L,msize=1048576
UNIT
# The link to the lab: a tap on the bridge of run.sh's lab network
# namespace, where the control plane listens on 10.0.2.100 and 10.0.2.2 is
# the gateway. Each VM has its own address on it (e2e.ip= on the kernel
# command line, 10.0.2.15 without). No udev, so no networkd: a static
# address and a default route (kubelet takes the node IP from the default
# route's interface in host mode).
cat > "$sd/e2e-net.service" <<'UNIT'
[Unit]
Description=e2e link to the host's API server
After=systemd-modules-load.service
Requires=systemd-modules-load.service
Before=network-online.target
Wants=network-online.target
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/sbin/ip link set lo up
ExecStart=/sbin/ip link set eth0 up
ExecStart=/bin/sh -c 'a=10.0.2.15; for w in $$(cat /proc/cmdline); do case $$w in e2e.ip=*) a=$${w#e2e.ip=};; esac; done; exec /sbin/ip addr add $$a/24 dev eth0'
ExecStart=/sbin/ip route add default via 10.0.2.2
[Install]
WantedBy=multi-user.target
UNIT
mkdir -p "$sd/multi-user.target.wants"
ln -sf ../e2e-net.service "$sd/multi-user.target.wants/e2e-net.service"
# The scenario, pulled in by systemd.wants= on the kernel command line; the
# VM powers off when it ends, whatever the outcome.
cat > "$sd/numa-e2e.service" <<'UNIT'
[Unit]
Description=numa-partition e2e scenario
After=multi-user.target mnt-share.mount e2e-net.service
Requires=mnt-share.mount
SuccessAction=poweroff-force
FailureAction=poweroff-force
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'exec /e2e/guest/scenario.sh >/dev/ttyS1 2>&1'
# No limit of its own: each step has one (scenario.sh) and the boot one
# (run.sh's timeout on QEMU, E2E_TIMEOUT); a fixed 25 min here once ended
# boot v2 in its eighth step.
TimeoutStartSec=infinity
UNIT
# Without udev dev-ttyS0.device never appears: a serial getty would hold
# the boot for 90 s. Timers and logins only cost time.
for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer dpkg-db-backup.timer \
         fstrim.timer systemd-tmpfiles-clean.timer serial-getty@ttyS0.service \
         serial-getty@ttyS1.service getty.target \
         systemd-logind.service e2scrub_reap.service systemd-update-utmp.service \
         systemd-update-utmp-runlevel.service; do
  ln -sf /dev/null "$sd/$u"
done
# Every daemon-reload re-runs all generators (0.5-1 s each under TCG). Keep
# fstab and debug (debug implements systemd.wants= on the command line).
mkdir -p "$root/etc/systemd/system-generators"
for g in "$root"/lib/systemd/system-generators/*; do
  case "$(basename "$g")" in
    systemd-fstab-generator|systemd-debug-generator) ;;
    *) ln -sf /dev/null "$root/etc/systemd/system-generators/$(basename "$g")" ;;
  esac
done
# PID 1 of a boot with a disk (run.sh: rdinit=/sbin/e2e-init, boot v2):
# the root moves from the initramfs onto the VM's persistent memory, as a
# real host's root is on a disk, so that what apply installs, the Nodes'
# certificates, the images and the kubelets' state survive a reboot. The
# first boot formats the blank device and copies the initramfs onto it; a
# later one finds the root as the last shutdown left it. switch_root
# frees the initramfs's memory, which the root's files no longer hold.
# The device is virtio-pmem (a file on the host QEMU maps into the guest)
# mounted with DAX: the guest reads and writes its files as memory, with
# no emulated disk controller and no second copy in the page cache. Under
# TCG a virtio disk made every step about 1.5x slower.
cat > "$root/sbin/e2e-init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
say() { echo "e2e-init: $*" > /dev/console; }
# Without the device there is nothing to reboot onto: the initramfs stays
# the root and step reboot says what it found.
stay() { say "$*; the initramfs stays the root"; umount /proc /sys /dev; exec /sbin/init; }
dev=/dev/pmem0 opts=noatime,dax=always
modprobe -a virtio_pci virtio_pmem nd_pmem ext4 || stay "modprobe virtio_pmem nd_pmem ext4 failed"
i=0
while [ ! -b $dev ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
[ -b $dev ] || stay "no device $dev after 30 s"
mkdir -p /disk
if ! mount -t ext4 -o $opts $dev /disk 2>/dev/null; then
  say "formatting the blank device $dev"
  mkfs.ext4 -q -F -b 4096 -L e2e-root $dev || stay "mkfs.ext4 $dev failed"
  mount -t ext4 -o $opts $dev /disk || stay "cannot mount the new file system"
fi
if [ ! -e /disk/etc/e2e-root-copied ]; then
  say "copying the initramfs onto $dev"
  tar -C / --one-file-system --exclude=./disk -cf - . | tar -C /disk -xpf - || stay "copying the root failed"
  date -u > /disk/etc/e2e-root-copied
  sync
fi
say "root on $dev, $opts ($(cat /disk/etc/e2e-root-copied))"
exec switch_root /disk /sbin/init
INIT
chmod 0755 "$root/sbin/e2e-init"
echo numa-e2e > "$root/etc/hostname"
: > "$root/etc/machine-id"

mkdir -p "$work/out"
(cd "$root" && find . -xdev | LC_ALL=C sort | cpio -o -H newc --quiet) > "$work/out/base.cpio"
cp "$work/kernel/boot/vmlinuz-$kver" "$work/out/vmlinuz"
{
  echo "kernel $kpkg $kver"
  echo "mirror $mirror"
  chroot "$root" dpkg-query -W -f='${Package} ${Version}\n'
} > "$work/out/manifest.txt"
rm -rf "$out"
mv "$work/out" "$out"
log "built $out in $((SECONDS - t0)) s: base.cpio $(du -m "$out/base.cpio" | cut -f1) MB"
echo "$out"
