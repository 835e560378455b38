# kube-proxy 1.37.2 as kubeadm deploys it (a DaemonSet, hostNetwork, its
# ConfigMap, nftables mode) runs once per partition, each in its
# partition's namespace with its own rules: a ClusterIP Service whose only
# endpoint is a pod in the other partition answers a pod of this one. The
# client's connection to the ClusterIP is translated by the kube-proxy of
# the client's partition (the pod's traffic enters that namespace), so both
# directions passing shows both kube-proxies at work, without collision.
# The pod subnets (ptp, 10.88.<index>.0/24) are routed through the host as
# a CNI's host-gw mode would.
. /e2e/guest/lib.sh
requires network
i=0
for p in $PARTITIONS; do
  ip route replace 10.88.$i.0/24 via ${ADDRESS[$p]} && ok "pod subnet 10.88.$i.0/24 of $p routed via ${ADDRESS[$p]}" || fail "route 10.88.$i.0/24"
  i=$((i + 1))
done
deploy_addon kube-proxy "kube-proxy DaemonSet and ConfigMap"
proxy_on() { k -n kube-system get pods -l k8s-app=kube-proxy --field-selector spec.nodeName=$(node_name $1) -o jsonpath='{.items[0].metadata.name}' 2>/dev/null; }
for p in $PARTITIONS; do
  running() { [ "$(k -n kube-system get pod "$(proxy_on $p)" -o jsonpath='{.status.phase}' 2>/dev/null)" = Running ]; }
  wait_until 240 "kube-proxy Running on $(node_name $p)" running \
    || { k -n kube-system describe pod "$(proxy_on $p)" | tail -15; k -n kube-system logs "$(proxy_on $p)" 2>&1 | tail -15; }
done
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
    resources: {requests: {cpu: 100m, memory: 16Mi}, limits: {memory: 16Mi}}
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
    running() { [ "$(k -n $NS get pod $w-$p -o jsonpath='{.status.phase}')" = Running ]; }
    wait_until 240 "pod $w-$p Running" running || k -n $NS describe pod $w-$p | tail -10
  done
done
for p in $PARTITIONS; do
  for q in $PARTITIONS; do
    [ $q = $p ] && continue
    ip=$(k -n $NS get svc backend-$q -o jsonpath='{.spec.clusterIP}')
    answer() { k -n $NS exec client-$p -- /workload get $ip:80 | grep -q "host=backend-$q"; }
    wait_until 90 "pod client-$p (partition $p) reaches Service backend-$q ($ip:80), whose only endpoint is in partition $q" answer \
      || { echo "  answer: $(k -n $NS exec client-$p -- /workload get $ip:80 2>&1)"; k -n kube-system logs "$(proxy_on $p)" 2>&1 | tail -10; }
  done
  restarts=$(k -n kube-system get pod "$(proxy_on $p)" -o jsonpath='{.status.containerStatuses[0].restartCount}')
  expect_eq "kube-proxy on $(node_name $p) restarts" "$restarts" 0
done
host_listen=$(ss -Hltn | awk '{print $4}' | grep -E ':(10249|10256)$' | tr '\n' ' ')
[ -z "$host_listen" ] && ok "no kube-proxy port open in the host's namespace" || fail "kube-proxy ports open on the host: $host_listen"
k -n $NS delete pod $(for p in $PARTITIONS; do echo backend-$p client-$p; done) --wait=false >/dev/null 2>&1
k -n $NS delete svc $(for p in $PARTITIONS; do echo backend-$p; done) >/dev/null 2>&1
run k delete -f $STATE/kube-proxy.yaml --wait=false >/dev/null
finish
