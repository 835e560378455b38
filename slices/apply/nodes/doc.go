// Package nodes is what remove and apply do with the partitions' Kubernetes
// Nodes (#25).
// Stopping a kubelet for good leaves its pods bound in the API server and
// its Node behind, NotReady; restarting one on fresh CPU/Memory Manager
// state makes it forget the exclusive CPUs and pinned memory of the pods
// it runs. So, before anything on the host changes, the Nodes a command
// disrupts (every partition's for remove; for apply those slices/apply's affectedNodes
// picks) are either drained (--drain) or the command refuses while pods
// other than DaemonSet, mirror, finished and terminating pods are bound
// to one (unless --force). After the host's changes, a Node whose
// partition is gone is deleted, and one whose kubelet came back is
// uncordoned once Ready.
//
// Whose credentials: Options.Kubeconfig when given (an identity
// examples/drain-rbac.yaml allows), else each partition's own kubelet's.
// The Node authorizer and NodeRestriction let a kubelet list the pods
// bound to its Node, cordon and uncordon its own Node and evict the pods
// bound to it (kubelet's own evictions need that), which is all a drain
// needs; not read PodDisruptionBudgets (the API's 429 then names the
// budget) nor delete its Node, which takes the other identity.
package nodes
