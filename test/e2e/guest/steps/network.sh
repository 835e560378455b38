# Each partition is a machine to the cluster (network.mode = "namespace",
# the default): its containerd, kubelet and allocator run in a network
# namespace of its own with an address of its own, which is its Node's
# InternalIP; one partition does not see another's interfaces but reaches
# it by address, as one machine reaches another; no kubelet listens in the
# host's namespace. Boot v2's uplink is a bridge, boot v1's macvlan.
. /e2e/guest/lib.sh
requires apply
[ "$NET_MODE" = namespace ] || die "boot $E2E_MODE runs network.mode = host"
ns_inode() { stat -L -c %i "$1"; }
for p in $PARTITIONS; do
  nsfile=/run/netns/np-$p
  [ -e $nsfile ] || { fail "no network namespace $nsfile"; continue; }
  want=$(ns_inode $nsfile)
  for u in containerd-$p.service kubelet-$p.service numa-allocator@$p.service; do
    pid=$(unit_prop $u MainPID)
    got=$(readlink /proc/$pid/ns/net)
    expect_eq "$u (pid $pid) in namespace np-$p" "$got" "net:[$want]"
  done
  expect_eq "np-$p's address" "$(in_netns $p ip -o -4 addr show dev eth0 | awk '{print $4}')" "${ADDRESS[$p]}/24"
  expect_eq "np-$p's default route ($UPLINK uplink)" "$(in_netns $p ip -4 route show default | awk '{print $3}')" $GATEWAY
  expect_eq "Node $(node_name $p) InternalIP" \
    "$(api /api/v1/nodes/$(node_name $p) '.status.addresses[] | select(.type == "InternalIP") | .address')" "${ADDRESS[$p]}"
  links=$(in_netns $p ip -o link | awk '{print $2}' | tr '\n' ' ')
  case "$links" in
    *npbr0*|*np-node*) fail "np-$p sees the host's links: $links" ;;
    *) ok "np-$p sees only its own links ($links)" ;;
  esac
  for q in $PARTITIONS; do
    [ $q = $p ] && continue
    in_netns $p ip -o addr | grep -q "${ADDRESS[$q]}/" && fail "np-$p has $q's address" || ok "np-$p does not have $q's address"
    # kubelet's port 10250 of the other partition, by its address.
    in_netns $p timeout 10 bash -c "exec 3<>/dev/tcp/${ADDRESS[$q]}/10250" \
      && ok "np-$p reaches $q's kubelet at ${ADDRESS[$q]}:10250" || fail "np-$p cannot reach ${ADDRESS[$q]}:10250"
  done
done
host_listen=$(ss -Hltn | awk '{print $4}' | grep -E ':(10250|10248)$' | tr '\n' ' ')
[ -z "$host_listen" ] && ok "no kubelet port open in the host's namespace" || fail "kubelet ports open on the host: $host_listen"
if [ "$UPLINK" = bridge ]; then
  expect_eq "IPv4 forwarding on (the bridge uplink routes)" "$(cat /proc/sys/net/ipv4/ip_forward)" 1
else
  # macvlan: each partition is on the LAN itself; the host routes nothing.
  expect_eq "IPv4 forwarding as before apply (the macvlan uplink routes nothing)" "$(cat /proc/sys/net/ipv4/ip_forward)" "$(cat $STATE/ip_forward-before)"
  expect_eq "np-node0's eth0 is a macvlan" "$(in_netns node0 ip -d -o link show eth0 | grep -o 'macvlan mode [a-z]*')" "macvlan mode bridge"
fi
st=$(numa-partition -o json status 2>&1)
for p in $PARTITIONS; do
  expect_eq "status: np-$p present and up with its address" \
    "$(jq -r --arg p $p '.partitions[]|select(.name==$p)|.network|"\(.present) \(.up) \(.addresses|join(","))"' <<<"$st")" "true true ${ADDRESS[$p]}/24"
done
finish
