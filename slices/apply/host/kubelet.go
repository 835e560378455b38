package host

import (
	"time"

	"github.com/numa-partition/numa-partition/kubeapi"
)

// KubeletClient is a client with a partition's own kubelet credentials:
// its kubeconfig and the files it names read below root, dialling from
// root's network namespace, as that kubelet does. Status reads a Node
// with it, the Nodes' orchestration drains one.
func KubeletClient(root, kubeconfig string, timeout time.Duration) (*kubeapi.Client, error) {
	cfg, err := kubeapi.Load(root, kubeconfig)
	if err != nil {
		return nil, err
	}
	return kubeapi.NewClient(cfg, kubeapi.Options{Timeout: timeout, DialContext: Dialer(root)}), nil
}
