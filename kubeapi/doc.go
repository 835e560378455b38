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
// Everything between a kubeconfig and the API server is client-go's, the
// code kubectl runs. The kubeconfig's schema (clientcmd/api/v1, decoded
// strictly, so a misspelt key is an error naming it), the rest.Config
// clientcmd builds from it, and the TLS settings and credentials of
// client-go's transport: client certificates, tokens, basic auth, exec
// credential plugins, the oidc auth provider, impersonation, proxy-url,
// tls-server-name, disable-compression, and insecure-skip-tls-verify,
// which is the operator's choice as it is kubectl's. The requests go
// through client-go's typed clientset (k8s.io/client-go/kubernetes;
// clientset.go builds it from that rest.Config), JSON both ways, each
// bounded by Options.Timeout and its answer by maxObjectBytes; their
// errors become this package's (*APIError and its sentinels, in one place:
// apiErr). The pod cache is a client-go informer (podinformer.go).
//
// What numa-partition does not leave to client-go: it reads the
// kubeconfig and every file it names itself, bounded and, for another
// host's root, inside that root, and hands client-go their bytes inline,
// so that client-go never opens a file; it refuses a plain-HTTP server
// (client-go would send the request anonymous), a credential given twice
// or half given (which one is used would not be obvious), an exec plugin
// that needs a terminal, and, under another host's root, an exec plugin
// or auth provider (it would run as this host). It does not read the
// environment's HTTPS_PROXY: only the kubeconfig's proxy-url.
//
// Reading is split from deciding: Parse turns a kubeconfig's bytes into
// the current context's target without I/O; Load reads the file and the
// files it names; Client does the request.
package kubeapi
