# 5. Pods whose nodeSelector names a partition too small for them stay
# Pending, with kube-scheduler's reason: 2 CPUs on red (whose Node offers
# 1), and 48Mi of 2Mi pages on red (whose Node offers its own 32Mi, not
# the machine's 80Mi: before the hugepage view the scheduler sent such a
# pod to red, kubelet rejected it at admission, and a Deployment looped).
. /e2e/guest/lib.sh
requires apply

# expect_unschedulable NAME WANT RESOURCES: a pod on red asking RESOURCES
# (requests = limits) is marked Unschedulable with WANT in the message.
expect_unschedulable() {
  local name=$1 want=$2 res=$3 msg
  k -n $NS delete pod $name --ignore-not-found --wait=false >/dev/null 2>&1
  cat <<YAML | run k apply -f - || { fail "creating pod $name"; return; }
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: $NS}
spec:
  nodeSelector: {numa-type: red, e2e.numa-partition.io/boot: $BOOT}
  automountServiceAccountToken: false
  containers:
  - name: work
    image: e2e.local/workload:1
    imagePullPolicy: Never
    resources: {requests: $res, limits: $res}
YAML
  unschedulable() {
    [ "$(api "$(pod_path $name)" '.status.conditions[]? | select(.type == "PodScheduled") | .reason')" = Unschedulable ]
  }
  wait_until 120 "pod $name marked Unschedulable by the scheduler" unschedulable
  msg=$(api "$(pod_path $name)" '.status.conditions[]? | select(.type == "PodScheduled") | .message')
  echo "  scheduler: $msg"
  grep -q "$want" <<<"$msg" && ok "the reason names $want" || fail "scheduler's message lacks '$want': $msg"
  sleep 5
  expect_eq "pod $name phase" "$(api "$(pod_path $name)" .status.phase)" Pending
  expect_eq "pod $name nodeName" "$(api "$(pod_path $name)" '.spec.nodeName // empty')" ""
  k -n $NS delete pod $name --wait=false >/dev/null
}

expect_unschedulable too-big "Insufficient cpu" '{cpu: "2", memory: 64Mi}'
# No CPU: red's one CPU is pinned-node0's; only the pages must not fit.
expect_unschedulable too-many-pages "Insufficient hugepages-2Mi" '{memory: 64Mi, hugepages-2Mi: 48Mi}'
finish
