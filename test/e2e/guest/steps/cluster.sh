# The host joins the cluster as a provisioned host does, before apply:
# the cluster CA where kubelet's clientCAFile and the bootstrap kubeconfig
# expect it, the bootstrap kubeconfig (one bootstrap token for every
# partition), and each partition's pod network config (what a CNI add-on
# writes). Then: the API server answers through the guestfwd link.
. /e2e/guest/lib.sh
install -D -m 0644 /e2e/cluster/ca.crt /etc/kubernetes/pki/ca.crt
install -D -m 0600 /e2e/cluster/bootstrap-kubelet.conf /etc/kubernetes/bootstrap-kubelet.conf
# In namespace mode flannel writes them (step apply deploys it).
i=0
[ "$NET_MODE" = namespace ] || for p in $PARTITIONS; do
  install -d /etc/cni/net.d-$p
  cat > /etc/cni/net.d-$p/10-e2e.conflist <<CNI
{"cniVersion": "0.4.0", "name": "e2e-$p", "plugins": [
  {"type": "ptp", "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.88.$i.0/24"}]]}}]}
CNI
  i=$((i + 1))
done
ok "CA, bootstrap kubeconfig$([ "$NET_MODE" = namespace ] || echo " and CNI configs") installed"
# Without a disk (boot v1) the root is the initramfs ("rootfs"),
# which neither overlayfs (containerd's snapshots) nor kubelet's
# filesystem statistics accept ("cannot find filesystem info for device
# rootfs"): each containerd's root gets a tmpfs of its own and the
# kubelets' root dirs one they share, as a host gives them disks; the
# plan splits that one between the Nodes (their ephemeral-storage). The
# cgroup v2 boots' root is on a disk (ext4, /sbin/e2e-init; run.sh says
# why): they are directories there, as on most hosts, and survive boot
# v2's reboot.
rootfs=$(findmnt -no FSTYPE /)
echo "  root filesystem: $rootfs"
for d in $KUBELETS_FS $(for p in $PARTITIONS; do echo /var/lib/containerd-$p; done); do
  install -d $d
  [ "$rootfs" = rootfs ] || continue
  mountpoint -q $d || run mount -t tmpfs -o size=1G,mode=0711 tmpfs $d || fail "cannot mount a tmpfs at $d"
done
[ -z "${E2E_DISK:-}" ] || [ "$rootfs" = ext4 ] && ok "boot $E2E_MODE's root file system is $rootfs" \
  || fail "boot $E2E_MODE's root is $rootfs, want ext4 on its disk (/sbin/e2e-init; console.log says why)"
wait_until 60 "API server /readyz through the guestfwd link" k get --raw /readyz
run k version || fail "kubectl version"
k get namespace $NS >/dev/null 2>&1 || run k create namespace $NS || fail "cannot create namespace $NS"
# Pods are refused until the controller manager made the namespace's
# default ServiceAccount.
wait_until 60 "ServiceAccount default in $NS" k -n $NS get serviceaccount default
finish
