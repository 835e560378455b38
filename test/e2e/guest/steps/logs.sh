# The API server reaches every partition's kubelet at its Node's address
# (InternalIP, the partition's own): `kubectl logs` and `kubectl exec` work
# for a pod in each partition, through the real kube-apiserver in the lab
# namespace, across the lab's bridge and this VM's partition bridge.
. /e2e/guest/lib.sh
requires network
for p in $PARTITIONS; do
  k apply -f - <<POD
apiVersion: v1
kind: Pod
metadata: {name: talk-$p, namespace: $NS}
spec:
  nodeSelector: {numa-partition.io/partition: $p, e2e.numa-partition.io/boot: $BOOT}
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 2
  containers:
  - name: work
    image: e2e.local/workload:1
    imagePullPolicy: Never
    resources: {requests: {cpu: 100m, memory: 16Mi}, limits: {memory: 16Mi}}
POD
done
for p in $PARTITIONS; do
  running() { [ "$(k -n $NS get pod talk-$p -o jsonpath='{.status.phase}')" = Running ]; }
  wait_until 240 "pod talk-$p Running" running || { k -n $NS describe pod talk-$p | tail -15; continue; }
  # Running comes when the container starts, its first line a moment
  # later; kubelet may not know the container by name for a moment more.
  logs_ok() { k -n $NS logs talk-$p 2>/dev/null | grep -q '^cpus='; }
  wait_until 60 "kubectl logs talk-$p (through $(node_name $p)'s kubelet at ${ADDRESS[$p]})" logs_ok \
    || echo "  logs: $(k -n $NS logs talk-$p 2>&1 | head -3)"
  exec_ok() { k -n $NS exec talk-$p -- /workload once 2>/dev/null | grep -q '^cpus='; }
  wait_until 60 "kubectl exec talk-$p -- /workload once" exec_ok \
    || echo "  exec: $(k -n $NS exec talk-$p -- /workload once 2>&1 | head -3)"
  echo "  talk-$p: logs '$(k -n $NS logs talk-$p 2>&1 | head -1)', exec '$(k -n $NS exec talk-$p -- /workload once 2>&1 | head -1)'"
done
k -n $NS delete pod $(for p in $PARTITIONS; do echo talk-$p; done) --wait=false >/dev/null 2>&1
finish
