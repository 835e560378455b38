// Package drain empties a Kubernetes Node the way `kubectl drain` does:
// cordon it, sort its pods (DaemonSet and mirror pods and finished pods
// stay, pods nothing would recreate and pods with emptyDir data are
// refused unless allowed), evict the others through the policy/v1 Eviction
// API, which honours PodDisruptionBudgets, retrying with backoff while a
// budget holds a pod back, and wait until the evicted pods are gone.
//
// The cordon is kubectl's own (k8s.io/kubectl/pkg/drain's cordon helper,
// through kubeapi.Client.SetUnschedulable). The rest of kubectl's drain
// does not do what this drain needs, so it stays here:
//   - its pod filters (Helper.GetPodsForDeletion) GET each pod's DaemonSet,
//     which a kubelet's credentials may not (the system:node role has no
//     apps rules), so a kubelet could not drain a Node with a DaemonSet pod
//     on it, and a DaemonSet pod whose DaemonSet is gone would be evicted
//     under --force; they evict finished and terminating pods rather than
//     leave or wait for them, and give no per-pod reason, only joined
//     messages, where Result and the dry run name each pod's;
//   - its eviction (Helper.EvictPod) sends no UID precondition, so a pod
//     replaced under the same name between rounds (a StatefulSet's, on
//     another Node) would be evicted in its place;
//   - it has no up-front refusal of a pod several PodDisruptionBudgets
//     select, no rounds that let one budget not hold back unrelated pods,
//     no Retry-After, no progress, no Result.
//
// The decisions are pure and apart (Classify, Budgets, Backoff, Name);
// Drain and Check are the shell that does the requests, through API.
package drain
