// Package kubeapi is the smallest Kubernetes API client numa-partition
// needs: `status` reads each partition's Node (is it Ready, what does it
// offer) with the credentials of a kubeconfig file, usually the
// partition's own kubelet's; the allocator's NRI plugin keeps the pods
// bound to its partition's Node in a PodCache (client-go's informer: a
// reflector lists and watches them) to place pods as one unit; `remove` lists the pods bound to a Node, cordons it,
// evicts its pods (policy/v1 Eviction, which honours
// PodDisruptionBudgets) and deletes it, with an identity allowed to
// (kubeapi/drain decides what to evict); apply and remove record
// core/v1 Events on the Nodes they touch, best effort and within a
// bounded time (EventRecorder).
//
// The requests go through client-go's typed clientset
// (k8s.io/client-go/kubernetes; clientset.go builds it), JSON both ways,
// each bounded by Options.Timeout and its answer by maxObjectBytes; their
// errors become this package's (*APIError and its sentinels, in one place:
// apiErr). The transport, TLS and credentials are still set up here, and an
// exec credential plugin and the oidc auth provider run through client-go's
// own code (exec.go, authprovider.go), which kubectl runs: their protocols,
// caching and refresh are not worth re-implementing. What it does not
// implement it refuses by name (other auth providers, basic auth,
// impersonation, proxies, skipping TLS verification) rather than sending
// a request that would quietly be anonymous or unverified.
//
// Reading is split from deciding: Parse turns a kubeconfig's bytes into
// the current context's target without I/O; Load reads the file and the
// files it names; Client does the request.
package kubeapi
