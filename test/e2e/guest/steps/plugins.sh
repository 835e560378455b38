# A plugin DaemonSet by kubelet's default paths registers with each
# partition's own kubelet only: np-deviceplugin (test/addons) serves a
# device plugin through /var/lib/kubelet/device-plugins/kubelet.sock and a
# CSI node plugin through a registration socket in
# /var/lib/kubelet/plugins_registry, both by their default hostPaths. In
# each partition's mount namespace those are the partition's own root dir
# (bound at /var/lib/kubelet), so every Node shows the device plugin's
# resource and a CSINode entry of its own.
. /e2e/guest/lib.sh
requires apply
deploy_addon np-deviceplugin "np-deviceplugin DaemonSet"
for p in $PARTITIONS; do
  n=$(node_name $p)
  tokens() { [ "$(api /api/v1/nodes/$n '.status.allocatable["e2e.numa-partition.io/token"]')" = 2 ]; }
  wait_until 240 "Node $n allocatable e2e.numa-partition.io/token = 2 (its own kubelet's device plugin)" tokens \
    || k -n kube-system get pods -o wide 2>&1 | tail -5
  csinode() { api /apis/storage.k8s.io/v1/csinodes/$n '.spec.drivers[]?.name' | grep -qx e2e.numa-partition.io; }
  wait_until 120 "CSINode $n lists driver e2e.numa-partition.io" csinode
  expect_eq "CSINode $n's driver nodeID" "$(api /apis/storage.k8s.io/v1/csinodes/$n '.spec.drivers[]? | select(.name == "e2e.numa-partition.io") | .nodeID')" "$n"
  [ -S $(kubelet_root $p)/plugins_registry/e2e.numa-partition.io-reg.sock ] || ls $(kubelet_root $p)/plugins_registry 2>&1 | sed 's/^/  plugins_registry: /'
done
[ -z "$(ls /var/lib/kubelet/plugins_registry 2>/dev/null)" ] && ok "nothing registered in the host's /var/lib/kubelet/plugins_registry" \
  || fail "the host's /var/lib/kubelet/plugins_registry has $(ls /var/lib/kubelet/plugins_registry | tr '\n' ' ')"
run k delete -f $STATE/np-deviceplugin.yaml --wait=false >/dev/null
finish
