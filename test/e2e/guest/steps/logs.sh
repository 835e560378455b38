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
    resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}  # 16Mi OOM-killed runc init (step services)
POD
done
for p in $PARTITIONS; do
  running() { pod_running talk-$p; }
  wait_until $POD_START_S "pod talk-$p Running" running || { k -n $NS describe pod talk-$p | tail -15; continue; }
  # Running comes when the container starts, its first line a moment
  # later; kubelet may not know the container by name for a moment more.
  # (The checks keep what they read: a kubectl call costs tens of
  # seconds of the VM's CPU under load.)
  logs_ok() { LOGS=$(k -n $NS logs talk-$p 2>/dev/null | head -1); [[ $LOGS == cpus=* ]]; }
  wait_until 60 "kubectl logs talk-$p (through $(node_name $p)'s kubelet at ${ADDRESS[$p]})" logs_ok \
    || echo "  logs: $(k -n $NS logs talk-$p 2>&1 | head -3)"
  exec_ok() { EXEC=$(k -n $NS exec talk-$p -- /workload once 2>/dev/null | head -1); [[ $EXEC == cpus=* ]]; }
  wait_until 60 "kubectl exec talk-$p -- /workload once" exec_ok \
    || echo "  exec: $(k -n $NS exec talk-$p -- /workload once 2>&1 | head -3)"
  echo "  talk-$p: logs '${LOGS:-}', exec '${EXEC:-}'"
done
k -n $NS delete pod $(for p in $PARTITIONS; do echo talk-$p; done) --wait=false >/dev/null 2>&1
finish
