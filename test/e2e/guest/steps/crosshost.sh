# Two hosts, one cluster, one pod network: this boot's partitions (v1:
# macvlan uplink, each on the lab's network with an address of its own)
# and boot v2's (bridge uplink, a subnet the lab routes to that VM) are
# Nodes of the same cluster running the same kube-proxy and flannel
# DaemonSets. A pod on a partition of this host and a pod on a partition
# of the other reach each other by pod address (flannel's vxlan between
# the two hosts' partitions) and through ClusterIP Services whose only
# endpoint is on the other host (this partition's kube-proxy); a pod here
# resolves names through CoreDNS, which runs on the other host; the API
# server reaches this host's kubelets at their own addresses (kubectl
# logs); every Node of the pod network has an InternalIP of its own.
. /e2e/guest/lib.sh
requires apply
[ "$NET_MODE" = namespace ] || die "boot $E2E_MODE runs network.mode = host"
[ -n "${E2E_PEER:-}" ] || die "no peer boot (run.sh sets E2E_PEER when boot v2 runs beside this one)"
here=node1 there=$E2E_PEER-node0
# The other host's partition must be in the pod network: its Node Ready
# and running flannel (boot v2 deploys it at its step apply, which runs
# at about the same time as this boot's).
flannel_ready_on() {
  node_ready "$1" && [ "$(api "/api/v1/namespaces/kube-flannel/pods?labelSelector=app%3Dflannel&fieldSelector=spec.nodeName%3D$1" '.items[0].status.containerStatuses[0].ready')" = true ]
}
t0=$SECONDS
wait_until 1200 "Node $there (boot ${E2E_PEER#e2e-}) Ready with flannel ready" flannel_ready_on $there \
  || die "the other host's partition never joined the pod network: $(k get node $there -o wide 2>&1 | tail -1)"
wait_until 300 "Node $(node_name $here) (this host) with flannel ready" flannel_ready_on $(node_name $here) \
  || die "this host's partition is not in the pod network"
echo "  both hosts in the pod network after $((SECONDS - t0)) s"

# xpod NAME PARTITION BOOT: a best-effort pod serving :8080 on BOOT's
# partition (no CPU request: boot v2's steps count node0's CPUs).
xpod() {
  k apply -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS, labels: {app: $1}}
spec:
  nodeSelector: {numa-partition.io/partition: $2, e2e.numa-partition.io/boot: $3}
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 2
  containers:
  - name: work
    image: e2e.local/workload:1
    imagePullPolicy: Never
    args: ["serve", ":8080"]
---
apiVersion: v1
kind: Service
metadata: {name: $1, namespace: $NS}
spec:
  selector: {app: $1}
  ports: [{port: 80, targetPort: 8080}]
POD
}
xpod xh-here $here $BOOT || fail "creating pod xh-here"
xpod xh-there node0 $E2E_PEER || fail "creating pod xh-there"
declare -A IP SVC
for w in xh-here xh-there; do
  running() { pod_running $w; }
  wait_until 300 "pod $w Running on $(api "$(pod_path $w)" .spec.nodeName)" running || k -n $NS describe pod $w | tail -10
  IP[$w]=$(api "$(pod_path $w)" .status.podIP)
  SVC[$w]=$(api "/api/v1/namespaces/$NS/services/$w" .spec.clusterIP)
done
cidr_here=$(api "/api/v1/nodes/$(node_name $here)" .spec.podCIDR)
cidr_there=$(api "/api/v1/nodes/$there" .spec.podCIDR)
[ -n "$cidr_here" ] && [ "$cidr_here" != "$cidr_there" ] && ok "the two hosts' Nodes have podCIDRs $cidr_here and $cidr_there" \
  || fail "podCIDRs '$cidr_here' and '$cidr_there'"
# Each pod's checks run in one kubectl exec (lib.sh probe), tried until
# every one answers as it should (routes and Services take a while to
# reach a new pod).
for pair in "xh-here xh-there" "xh-there xh-here"; do
  set -- $pair
  from=$1 to=$2
  answered() {
    probe $from get ${IP[$to]}:8080 get ${SVC[$to]}:80 || return 1
    [[ $(probe_answer get ${IP[$to]}:8080) == *"host=$to"* && $(probe_answer get ${SVC[$to]}:80) == *"host=$to"* ]]
  }
  wait_until 300 "kubectl exec into $from runs its checks" answered || printf '    %s\n' "$PROBE"
  expect_has "pod $from reaches pod $to at ${IP[$to]}:8080 on the other host (vxlan)" "$(probe_answer get ${IP[$to]}:8080)" "host=$to"
  expect_has "pod $from reaches Service $to (${SVC[$to]}:80), whose only endpoint is on the other host" "$(probe_answer get ${SVC[$to]}:80)" "host=$to"
done
# Names: CoreDNS runs on the other host only (boot v2's step services
# deploys it).
if wait_until 900 "CoreDNS (on boot ${E2E_PEER#e2e-}'s Nodes) ready" dns_ready; then
  named() {
    probe xh-here resolve xh-there get xh-there:80 || return 1
    [ "$(probe_answer resolve xh-there)" = "${SVC[xh-there]}" ] && [[ $(probe_answer get xh-there:80) == *"host=xh-there"* ]]
  }
  wait_until 180 "kubectl exec into xh-here runs its name checks" named || printf '    %s\n' "$PROBE"
  expect_eq "pod xh-here: xh-there through CoreDNS on the other host" "$(probe_answer resolve xh-there)" "${SVC[xh-there]}"
  expect_has "pod xh-here reaches xh-there:80 by name" "$(probe_answer get xh-there:80)" "host=xh-there"
fi
# The API server reaches this host's kubelet at the partition's address.
k -n $NS logs xh-here >/dev/null 2>&1 && ok "kubectl logs of xh-here (API server → $(api "/api/v1/nodes/$(node_name $here)" '.status.addresses[] | select(.type == "InternalIP") | .address'):10250)" \
  || fail "kubectl logs xh-here: $(k -n $NS logs xh-here 2>&1 | tail -1)"
# One address per Node across the pod network's hosts.
ips=$(api "/api/v1/nodes?labelSelector=e2e.numa-partition.io%2Faddon-flannel%3Dimported" '.items[].status.addresses[] | select(.type == "InternalIP") | .address')
n=$(grep -c . <<<"$ips"); u=$(sort -u <<<"$ips" | grep -c .)
[ "$n" -ge 4 ] && [ "$n" = "$u" ] && ok "$n Nodes in the pod network, $u distinct InternalIPs: $(tr '\n' ' ' <<<"$ips")" \
  || fail "Nodes in the pod network: $n, distinct InternalIPs: $u ($(tr '\n' ' ' <<<"$ips"))"
k -n $NS delete pod xh-here xh-there --wait=false >/dev/null 2>&1
k -n $NS delete svc xh-here xh-there >/dev/null 2>&1

# Spreading over hosts (issue 36): every Node names its physical host in
# numa-partition.io/host, so a Deployment spread by that key puts its two
# replicas on the two hosts, where kubernetes.io/hostname (one value per
# partition) would allow both on one.
for b in $BOOT $E2E_PEER; do
  hosts=$(api "/api/v1/nodes?labelSelector=e2e.numa-partition.io%2Fboot%3D$b" '.items[].metadata.labels["numa-partition.io/host"]' | sort -u | tr '\n' ' ')
  [ "$hosts" = "$b " ] && ok "every Node of host $b carries numa-partition.io/host=$b" || fail "Nodes of host $b carry numa-partition.io/host '$hosts'"
done
k apply -f - >/dev/null <<DEPLOY || fail "creating Deployment spread"
apiVersion: apps/v1
kind: Deployment
metadata: {name: spread, namespace: $NS}
spec:
  replicas: 2
  selector: {matchLabels: {app: spread}}
  template:
    metadata: {labels: {app: spread}}
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: e2e.numa-partition.io/boot, operator: In, values: [$BOOT, $E2E_PEER]}]
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: numa-partition.io/host, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: spread}}}
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 2
      containers:
      - {name: work, image: e2e.local/workload:1, imagePullPolicy: Never, args: ["serve", ":8080"]}
DEPLOY
spread_hosts() {
  api "/api/v1/namespaces/$NS/pods?labelSelector=app%3Dspread" '.items[].spec.nodeName // empty' | while read -r n; do
    api "/api/v1/nodes/$n" '.metadata.labels["numa-partition.io/host"]'
  done | sort -u | tr '\n' ' '
}
both() { [ "$(spread_hosts)" = "$(printf '%s\n' $BOOT $E2E_PEER | sort | tr '\n' ' ')" ]; }
wait_until 180 "Deployment spread's 2 replicas on the 2 hosts by numa-partition.io/host" both \
  && ok "Deployment spread: one replica on each host ($(api "/api/v1/namespaces/$NS/pods?labelSelector=app%3Dspread" '.items[].spec.nodeName' | tr '\n' ' '))" \
  || echo "  replicas on hosts '$(spread_hosts)': $(k -n $NS get pods -l app=spread -o wide 2>&1 | tail -2)"
k -n $NS delete deployment spread --wait=false >/dev/null 2>&1
finish
