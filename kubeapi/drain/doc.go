// Package drain empties a Kubernetes Node the way `kubectl drain` does,
// through kubeapi's small client: cordon it, sort its pods (DaemonSet and
// mirror pods and finished pods stay, pods nothing would recreate and pods
// with emptyDir data are refused unless allowed), evict the others through
// the policy/v1 Eviction API, which honours PodDisruptionBudgets, retrying
// with backoff while a budget holds a pod back, and wait until the evicted
// pods are gone.
//
// The decisions are pure and apart (Classify, Budgets, Backoff, Name);
// Drain and Check are the shell that does the requests, through API.
package drain
