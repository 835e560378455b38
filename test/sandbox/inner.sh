#!/bin/bash
# inner.sh — PID 1 of the sandbox's pid namespace, inside its own mount
# namespace: builds the root (overlay of / on a tmpfs), mounts the API file
# systems the way a container manager would, masks units that would touch
# the shared kernel, pivots and execs systemd. Called by sandbox.sh launch.
set -euo pipefail
STATE=$1
R=$STATE/root; O=$STATE/ovl
mkdir -p "$R" "$O"
# The upper layer must be another file system than / ("overlapping layers").
mount -t tmpfs -o mode=755,size=2G npsandbox-ovl "$O"
mkdir -p "$O/upper" "$O/work"
mount -t overlay overlay -o "lowerdir=/,upperdir=$O/upper,workdir=$O/work" "$R"

mount -t proc -o nosuid,nodev,noexec proc "$R/proc"
mount --bind "$R/proc/sys" "$R/proc/sys"; mount -o remount,bind,ro "$R/proc/sys"
# ... but for the sandbox's own network namespace: numa-partition's uplink
# turns on its IPv4 forwarding (and remove turns it back).
mount --bind "$R/proc/sys/net" "$R/proc/sys/net"; mount -o remount,bind,rw "$R/proc/sys/net"
if [ -e "$R/proc/sysrq-trigger" ]; then mount --bind /dev/null "$R/proc/sysrq-trigger"; fi
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$R/sys"

# cgroups: the same layout as the host, each hierarchy mounted anew inside the
# cgroup namespace so its root is npsandbox-NAME.
CGOPTS=nosuid,nodev,noexec
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
  mount -t cgroup2 -o $CGOPTS cgroup2 "$R/sys/fs/cgroup"
else
  mount -t tmpfs -o mode=755,$CGOPTS cgroup "$R/sys/fs/cgroup"
  awk '($3=="cgroup"||$3=="cgroup2") && index($2,"/sys/fs/cgroup/")==1 {print $2, $3, $4}' /proc/self/mounts |
  while read -r dir type opts; do
    sub=${dir#/sys/fs/cgroup/}
    mkdir -p "$R/sys/fs/cgroup/$sub"
    if [ "$type" = cgroup2 ]; then
      mount -t cgroup2 -o $CGOPTS cgroup2 "$R/sys/fs/cgroup/$sub"
    else
      # keep only the controller/name options (cpu,cpuacct / name=systemd)
      ctl=$(echo "$opts" | tr , '\n' | grep -vxE 'rw|ro|relatime|noatime|nosuid|nodev|noexec|clone_children|nsdelegate' | paste -sd, -)
      case "$ctl" in name=*) ctl=none,$ctl ;; esac
      mount -t cgroup -o $CGOPTS,$ctl cgroup "$R/sys/fs/cgroup/$sub"
    fi
  done
fi

mount -t tmpfs -o mode=755,nosuid,size=64M dev "$R/dev"
for d in null zero full random urandom tty; do touch "$R/dev/$d"; mount --bind "/dev/$d" "$R/dev/$d"; done
# Each partition's holder serves its /proc/meminfo through FUSE.
[ -c /dev/fuse ] || modprobe fuse 2>/dev/null || true
if [ -c /dev/fuse ]; then touch "$R/dev/fuse"; mount --bind /dev/fuse "$R/dev/fuse"; fi
mkdir "$R/dev/pts" "$R/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$R/dev/pts"
ln -s pts/ptmx "$R/dev/ptmx"; ln -s /proc/self/fd "$R/dev/fd"
ln -s /proc/self/fd/0 "$R/dev/stdin"; ln -s /proc/self/fd/1 "$R/dev/stdout"; ln -s /proc/self/fd/2 "$R/dev/stderr"
touch "$R/dev/console"; mount --bind "$STATE/console.log" "$R/dev/console"
mount -t tmpfs -o mode=755,nosuid,nodev run "$R/run"
mount -t tmpfs -o mode=1777 tmp "$R/tmp"

# Unit configuration (lives only in the tmpfs upper layer): no host services,
# nothing that writes global kernel state, no getty waiting for a tty.
E=$R/etc/systemd/system
rm -rf "$E"/*.wants "$E"/dbus-org.freedesktop.timesync1.service
for u in systemd-modules-load.service kmod-static-nodes.service systemd-binfmt.service \
         proc-sys-fs-binfmt_misc.automount sys-kernel-config.mount sys-kernel-debug.mount \
         sys-kernel-tracing.mount sys-fs-fuse-connections.mount systemd-sysctl.service \
         systemd-remount-fs.service getty.target console-getty.service systemd-timesyncd.service \
         systemd-pstore.service systemd-random-seed.service e2scrub_reap.service \
         apt-daily.timer apt-daily-upgrade.timer man-db.timer systemd-logind.service \
         systemd-networkd.service networking.service ssh.service cron.service; do
  ln -sf /dev/null "$E/$u"
done
ln -sf /lib/systemd/system/multi-user.target "$E/default.target"
systemd-id128 new > "$R/etc/machine-id"
echo npsandbox > "$R/etc/hostname"; hostname npsandbox

cd "$R"; mkdir -p .oldroot; pivot_root . .oldroot; cd /
umount -l /.oldroot; rmdir /.oldroot
exec env -i container=npsandbox TERM=dumb /lib/systemd/systemd --log-level=info
