# A kubeadm cluster's add-ons run unmodified in every partition, each in
# its partition's network namespace, as on a machine of its own:
# flannel 0.28 (the pod network: vxlan, each Node's podCIDR from the
# controller manager) and kube-proxy 1.37.2 (nftables), DaemonSets with
# hostNetwork deployed at step apply, and CoreDNS 1.15 with its Service
# (kubelet's clusterDNS). Asserted: every add-on pod Running with no
# restart; flannel's lease and CNI config in each partition's own
# directories (network.node_dirs), none in the host's; pods get addresses
# of their Node's podCIDR and reach each other across partitions by pod
# address (vxlan); from a pod of each partition, a ClusterIP Service whose
# only endpoint is in the other partition answers (translated by the
# client partition's kube-proxy), `kubernetes.default` and the Service's
# name resolve through CoreDNS, and the name answers (each client's
# checks in one kubectl exec, through the API server and its partition's
# kubelet at its Node's address, as `kubectl logs` of each backend); no
# add-on port is open in the host's namespace.
. /e2e/guest/lib.sh
requires apply
[ "$NET_MODE" = namespace ] || die "boot $E2E_MODE runs network.mode = host"

# addon_pod NS SELECTOR P: the name of the pod of SELECTOR on P's Node.
addon_pod() { pods_on "$1" "$2" "$(node_name $3)" 2>/dev/null | head -1; }
declare -A PODCIDR POD_IP SVC_IP
addon_running() { pod_running "$(addon_pod "$@")" "$1"; }
for p in $PARTITIONS; do
  n=$(node_name $p)
  for a in "kube-flannel app=flannel" "kube-system k8s-app=kube-proxy"; do
    set -- $a
    wait_until $POD_START_S "$2 Running on $n" addon_running $1 $2 $p \
      || { k -n $1 describe pod "$(addon_pod $1 $2 $p)" | tail -15; k -n $1 logs "$(addon_pod $1 $2 $p)" 2>&1 | tail -15; }
    expect_eq "$2 on $n restarts" "$(api "$(pod_path "$(addon_pod $1 $2 $p)" $1)" '.status.containerStatuses[0].restartCount')" 0
  done
  cidr=$(api /api/v1/nodes/$n .spec.podCIDR)
  [ -n "$cidr" ] && ok "Node $n has podCIDR $cidr" || fail "Node $n has no podCIDR (kube-controller-manager --allocate-node-cidrs)"
  PODCIDR[$p]=$cidr
  # flannel's lease and CNI config are the partition's own: in its
  # namespace at /run/flannel and /etc/cni/net.d, on the host in the
  # node dirs' sources.
  wait_until 60 "flannel's lease for $n in /run/flannel-$p/subnet.env" grep -q "^FLANNEL_SUBNET=${cidr%.0/24}.1/24$" /run/flannel-$p/subnet.env \
    || echo "  subnet.env: $(cat /run/flannel-$p/subnet.env 2>&1 | tr '\n' ' ')"
  [ -s /etc/cni/net.d-$p/10-flannel.conflist ] && ok "flannel's CNI config in /etc/cni/net.d-$p" || fail "no /etc/cni/net.d-$p/10-flannel.conflist"
  in_netns $p ip -o link show flannel.1 >/dev/null 2>&1 && ok "vxlan flannel.1 in np-$p" || fail "no flannel.1 in np-$p"
done
[ ! -e /run/flannel/subnet.env ] && ok "the host's /run/flannel holds no lease" || fail "a lease in the host's /run/flannel: $(cat /run/flannel/subnet.env)"
ls /etc/cni/net.d/*flannel* >/dev/null 2>&1 && fail "flannel wrote into the host's /etc/cni/net.d" || ok "the host's /etc/cni/net.d has no flannel config"
ip -o link show flannel.1 >/dev/null 2>&1 && fail "flannel.1 on the host" || ok "no flannel.1 in the host's namespace"

deploy_addon coredns "CoreDNS Deployment and kube-dns Service"
wait_until 300 "CoreDNS 2/2 ready" dns_ready || { k -n kube-system get pods -l k8s-app=kube-dns -o wide; k -n kube-system describe pods -l k8s-app=kube-dns | tail -20; }
expect_eq "kube-dns Service address (kubelet's clusterDNS)" "$(api /api/v1/namespaces/kube-system/services/kube-dns .spec.clusterIP)" $DNS_IP

# 64Mi: at 16Mi the container's own cgroup OOM-killed runc's init while
# it started the container (backend-node0 in a crash loop, "write
# init-p: broken pipe"; runc's init is counted against the limit).
pod() { # pod NAME PARTITION ARGS...
  local name=$1 p=$2; shift 2
  local args= a
  for a in "$@"; do args+="\"$a\", "; done
  k apply -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: $NS, labels: {app: $name}}
spec:
  nodeSelector: {numa-partition.io/partition: $p, e2e.numa-partition.io/boot: $BOOT}
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 2
  containers:
  - name: work
    image: e2e.local/workload:1
    imagePullPolicy: Never
    args: [${args%, }]
    resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}
POD
}
for p in $PARTITIONS; do
  pod backend-$p $p serve :8080
  pod client-$p $p
  k apply -f - >/dev/null <<SVC
apiVersion: v1
kind: Service
metadata: {name: backend-$p, namespace: $NS}
spec:
  selector: {app: backend-$p}
  ports: [{port: 80, targetPort: 8080}]
SVC
done
for p in $PARTITIONS; do
  for w in backend client; do
    running() { pod_running $w-$p; }
    wait_until $POD_START_S "pod $w-$p Running" running || k -n $NS describe pod $w-$p | tail -10
  done
  POD_IP[$p]=$(api "$(pod_path backend-$p)" .status.podIP)
  prefix=${PODCIDR[$p]%.0/24}.
  [ -n "${PODCIDR[$p]}" ] && [ "${POD_IP[$p]#$prefix}" != "${POD_IP[$p]}" ] \
    && ok "pod backend-$p has ${POD_IP[$p]}, of its Node's podCIDR ${PODCIDR[$p]}" \
    || fail "pod backend-$p has '${POD_IP[$p]}', not of its Node's podCIDR '${PODCIDR[$p]}'"
  SVC_IP[$p]=$(api /api/v1/namespaces/$NS/services/backend-$p .spec.clusterIP)
done
k8s_ip=$(api /api/v1/namespaces/default/services/kubernetes .spec.clusterIP)
for p in $PARTITIONS; do
  # Each client's checks run in one kubectl exec (lib.sh probe), tried
  # until every one answers as it should: the first tries can meet a
  # container kubelet does not know yet ("container not found", seen for
  # 90 s under TCG), routes flannel has not set, a Service kube-proxy has
  # not programmed, CoreDNS not serving the name yet.
  ops=()
  for q in $PARTITIONS; do
    [ $q = $p ] && continue
    ops+=(get ${POD_IP[$q]}:8080 get ${SVC_IP[$q]}:80 resolve backend-$q get backend-$q:80)
  done
  ops+=(resolve kubernetes.default)
  answered() {
    probe client-$p "${ops[@]}" || return 1
    local q
    for q in $PARTITIONS; do
      [ $q = $p ] && continue
      [[ $(probe_answer get ${POD_IP[$q]}:8080) == *"host=backend-$q"* ]] && [[ $(probe_answer get ${SVC_IP[$q]}:80) == *"host=backend-$q"* ]] \
        && [ "$(probe_answer resolve backend-$q)" = "${SVC_IP[$q]}" ] && [[ $(probe_answer get backend-$q:80) == *"host=backend-$q"* ]] || return 1
    done
    [ "$(probe_answer resolve kubernetes.default)" = "$k8s_ip" ]
  }
  wait_until 300 "kubectl exec into client-$p runs its checks" answered \
    || { printf '    %s\n' "$PROBE"; k -n kube-system logs "$(addon_pod kube-system k8s-app=kube-proxy $p)" 2>&1 | tail -10; }
  for q in $PARTITIONS; do
    [ $q = $p ] && continue
    expect_has "pod client-$p reaches pod backend-$q at ${POD_IP[$q]}:8080 across partitions (vxlan)" "$(probe_answer get ${POD_IP[$q]}:8080)" "host=backend-$q"
    expect_has "pod client-$p (partition $p) reaches Service backend-$q (${SVC_IP[$q]}:80), whose only endpoint is in partition $q" \
      "$(probe_answer get ${SVC_IP[$q]}:80)" "host=backend-$q"
    expect_eq "pod client-$p: backend-$q through CoreDNS" "$(probe_answer resolve backend-$q)" "${SVC_IP[$q]}"
    expect_has "pod client-$p reaches backend-$q:80 by name" "$(probe_answer get backend-$q:80)" "host=backend-$q"
  done
  expect_eq "pod client-$p: kubernetes.default through CoreDNS" "$(probe_answer resolve kubernetes.default)" "$k8s_ip"
  # The API server reaches the partition's kubelet at its Node's address
  # for `kubectl logs` as for the execs above (the backend's first line is
  # its answer).
  logs_ok() { LOGS=$(k -n $NS logs backend-$p 2>/dev/null | head -1); [[ $LOGS == cpus=*" host=backend-$p" ]]; }
  wait_until 60 "kubectl logs backend-$p (through $(node_name $p)'s kubelet at ${ADDRESS[$p]})" logs_ok \
    || echo "  logs: $(k -n $NS logs backend-$p 2>&1 | head -3)"
done
host_listen=$(ss -Hltnu | awk '{print $5}' | grep -E ':(10249|10256|8081|53|9153|8080|8181)$' | tr '\n' ' ')
[ -z "$host_listen" ] && ok "no kube-proxy, flannel or CoreDNS port open in the host's namespace" || fail "add-on ports open on the host: $host_listen"
k -n $NS delete pod $(for p in $PARTITIONS; do echo backend-$p client-$p; done) --wait=false >/dev/null 2>&1
k -n $NS delete svc $(for p in $PARTITIONS; do echo backend-$p; done) >/dev/null 2>&1
finish
