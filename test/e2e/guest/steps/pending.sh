# 5. A pod whose nodeSelector names a partition too small for it (2 CPUs
# on red, whose Node offers 1) stays Pending, with kube-scheduler's reason.
. /e2e/guest/lib.sh
requires apply
k -n $NS delete pod too-big --ignore-not-found --wait=false >/dev/null 2>&1
cat <<YAML | run k apply -f - || die "creating pod too-big"
apiVersion: v1
kind: Pod
metadata: {name: too-big, namespace: $NS}
spec:
  nodeSelector: {numa-type: red, e2e.numa-partition.io/boot: $BOOT}
  automountServiceAccountToken: false
  containers:
  - name: work
    image: e2e.local/workload:1
    imagePullPolicy: Never
    resources:
      requests: {cpu: "2", memory: 64Mi}
      limits: {cpu: "2", memory: 64Mi}
YAML
unschedulable() {
  [ "$(k -n $NS get pod too-big -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" = Unschedulable ]
}
wait_until 120 "pod too-big marked Unschedulable by the scheduler" unschedulable
msg=$(k -n $NS get pod too-big -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
echo "  scheduler: $msg"
grep -q "Insufficient cpu" <<<"$msg" && ok "the reason names Insufficient cpu" || fail "scheduler's message lacks 'Insufficient cpu': $msg"
sleep 5
expect_eq "pod too-big phase" "$(k -n $NS get pod too-big -o jsonpath='{.status.phase}')" Pending
expect_eq "pod too-big nodeName" "$(k -n $NS get pod too-big -o jsonpath='{.spec.nodeName}')" ""
k -n $NS delete pod too-big --wait=false >/dev/null

# The same for hugepages: red's Node offers its own 32Mi of 2Mi pages, not
# the machine's 80Mi, so a pod asking 48Mi (which blue could hold) is
# never sent to red (before the hugepage view kubelet rejected it at
# admission instead, and a Deployment looped).
k -n $NS delete pod too-many-pages --ignore-not-found --wait=false >/dev/null 2>&1
cat <<YAML | run k apply -f - || die "creating pod too-many-pages"
apiVersion: v1
kind: Pod
metadata: {name: too-many-pages, namespace: $NS}
spec:
  nodeSelector: {numa-type: red, e2e.numa-partition.io/boot: $BOOT}
  automountServiceAccountToken: false
  containers:
  - name: work
    image: e2e.local/workload:1
    imagePullPolicy: Never
    resources:
      # No CPU: red's one CPU is pinned-node0's; only the pages must not fit.
      requests: {memory: 64Mi, hugepages-2Mi: 48Mi}
      limits: {memory: 64Mi, hugepages-2Mi: 48Mi}
YAML
pages_unschedulable() {
  [ "$(k -n $NS get pod too-many-pages -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" = Unschedulable ]
}
wait_until 120 "pod too-many-pages marked Unschedulable by the scheduler" pages_unschedulable
msg=$(k -n $NS get pod too-many-pages -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
echo "  scheduler: $msg"
grep -q "Insufficient hugepages-2Mi" <<<"$msg" && ok "the reason names Insufficient hugepages-2Mi" || fail "scheduler's message lacks 'Insufficient hugepages-2Mi': $msg"
expect_eq "pod too-many-pages nodeName" "$(k -n $NS get pod too-many-pages -o jsonpath='{.spec.nodeName}')" ""
k -n $NS delete pod too-many-pages --wait=false >/dev/null
finish
