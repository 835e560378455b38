# 2. `apply` with a config for 2 partitions and 1 reserved CPU brings up
# the real containerd 2 and kubelet 1.37 per partition; each kubelet joins
# by TLS bootstrap and its Node registers Ready, named and labelled as
# planned.
. /e2e/guest/lib.sh
requires cluster
install -d /etc/numa-partition && config_src > $CONFIG
# No registry: each partition's containerd starts on a root that holds
# the e2e's images already (lib.sh seed_containerd); the seed's memory
# is given back once every partition has its copy.
[ -s $SEEDED ] || die "no list of the seeded images at $SEEDED"
seeded=$(sort $SEEDED | tr '\n' ' ')
for p in $PARTITIONS; do
  t0=$SECONDS
  seed_containerd $p && ok "containerd-$p's root seeded with $(wc -w <<<"$seeded") images in $((SECONDS - t0)) s" \
    || die "could not seed containerd-$p's root from $SEED"
done
rm -f $SEED
if [ "$E2E_MODE" = v1 ]; then
  # nri mode needs cgroup v2: apply refuses it here, naming why, and
  # changes nothing; node1 then keeps kubelet's managers. (The config
  # ends with node1's [[partition]] table.)
  { config_src; printf 'allocator_mode = "nri"\n'; } > $CONFIG
  out=$(numa-partition apply 2>&1); rc=$?
  [ $rc != 0 ] && grep -q 'allocator mode "nri" needs cgroup v2' <<<"$out" \
    && ok "apply refuses nri mode on cgroup v1: $(grep -o 'partition node1: allocator mode[^;]*' <<<"$out")" \
    || fail "apply with nri mode on cgroup v1 exited $rc: $(tail -2 <<<"$out" | tr '\n' ' ')"
  [ -z "$(ls /etc/systemd/system | grep -E '^(kubelet|containerd)-node|^node[01]\.slice')" ] \
    && ok "the refused apply changed nothing" || fail "the refused apply left units: $(ls /etc/systemd/system | tr '\n' ' ')"
  config_src > $CONFIG
fi
# What remove must give back (the uplink turns forwarding on).
cat /proc/sys/net/ipv4/ip_forward > $STATE/ip_forward-before
ip -o link | awk '{print $2}' | sort > $STATE/links-before
echo "  \$ numa-partition apply"
numa-partition apply > $STATE/apply.out 2>&1
rc=$?
cat $STATE/apply.out
[ $rc = 0 ] || die "numa-partition apply exited $rc: $(tail -3 $STATE/apply.out | tr '\n' ' ')"
ok "apply exited 0"
grep -q 'failCgroupV1: false' /etc/numa-partition/kubelet-node0.yaml && ok "KubeletConfiguration sets failCgroupV1: false" \
  || fail "kubelet-node0.yaml lacks failCgroupV1: false"
# Each containerd found the seeded images in its root (the pause image
# among them: runtime.sandbox_image names it); CRI adds a reference by
# digest (the image's ID) for each.
for p in $PARTITIONS; do
  wait_until 60 "containerd-$p answers" ctr --address "$(socket_of $p)" version
  expect_eq "containerd-$p's images" "$(ctr --address "$(socket_of $p)" -n k8s.io images ls -q | grep -v '^sha256:' | sort | tr '\n' ' ')" "$seeded"
done
# In namespace mode the cluster runs its add-ons, as a kubeadm cluster
# does before a host joins: kube-proxy and the pod network (flannel, which
# writes each partition's CNI config: until then kubelet reports the
# network not ready and its Node NotReady), both DaemonSets with
# hostNetwork, so once per partition, each in its partition's namespace.
# kube-proxy first: flanneld reaches the API server through the
# kubernetes Service, which only a running kube-proxy translates (started
# the other way round, with an image import of minutes between them,
# flanneld crash-looped 4-5 times until kube-proxy ran).
if [ "$NET_MODE" = namespace ]; then
  deploy_addon kube-proxy "kube-proxy DaemonSet"
  deploy_addon flannel "flannel DaemonSet (the pod network)"
fi
wait_healthy || die "the kubelets are not healthy; nothing below can pass"
for p in $PARTITIONS; do
  for u in $(partition_units $p); do
    expect_eq "$u ActiveState" "$(unit_prop $u ActiveState)" active
  done
  for u in containerd-$p.service numa-allocator@$p.service kubelet-$p.service; do
    expect_eq "$u NRestarts (no crash loop)" "$(unit_prop $u NRestarts)" 0
  done
done
expect_eq "numa-partition-hugepages.service ActiveState" "$(unit_prop numa-partition-hugepages.service ActiveState)" active
for p in $PARTITIONS; do
  n=$(node_name $p)
  # Under TCG a Node takes 30 s to a few minutes to turn Ready; each new
  # reason kubelet gives meanwhile goes into the log.
  t0=$SECONDS last=
  until node_ready $n; do
    why=$(api /api/v1/nodes/$n '.status.conditions[]? | select(.type=="Ready") | "\(.reason): \(.message)"' 2>&1)
    [ "$why" != "$last" ] && echo "  Node $n not Ready after $((SECONDS - t0))s: $why" && last=$why
    [ $((SECONDS - t0)) -ge 360 ] && break
    sleep 2
  done
  if ! node_ready $n; then
    fail "Node $n not Ready after 360s"; k get node $n -o yaml 2>&1 | tail -40; journal_tail kubelet-$p.service 40; continue
  fi
  ok "Node $n Ready after $((SECONDS - t0))s"
  labels=$(api /api/v1/nodes/$n '.metadata.labels | "\(.["numa-type"] // "") \(.["numa-partition.io/partition"] // "") \(.["e2e.numa-partition.io/boot"] // "")"')
  expect_eq "Node $n labels numa-type, partition, boot" "$labels" "${COLOR[$p]} $p $BOOT"
  # TLS bootstrap left the partition its own client certificate in its own
  # cert dir, and the API server knows it as system:node:<its node name>.
  kc=/etc/kubernetes/kubelet-$p.conf
  grep -q "client-certificate: $(kubelet_root $p)/pki/kubelet-client-current.pem" $kc \
    && ok "$kc uses the certificate in $(kubelet_root $p)/pki" || fail "$kc does not use $(kubelet_root $p)/pki/kubelet-client-current.pem: $(grep client- $kc | tr '\n' ' ')"
  expect_eq "identity of $kc (SelfSubjectReview)" \
    "$(kubectl --kubeconfig $kc auth whoami -o jsonpath='{.status.userInfo.username}' 2>&1)" "system:node:$n"
done
run k get nodes -l e2e.numa-partition.io/boot=$BOOT -o wide
main_pids > $STATE/pids-after-apply
finish
