package status

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/record"
)

// NodeStatus is a partition's Kubernetes Node as the API server reports
// it: whether it is Ready and what it offers.
type NodeStatus struct {
	Name string `json:"name"`
	// Kubeconfig is the kubeconfig the Node was read with: status
	// --kubeconfig, else the partition's own kubelet's.
	Kubeconfig string `json:"kubeconfig"`
	// Ready is true when the Node's Ready condition is True.
	Ready bool `json:"ready"`
	// Condition is the Ready condition's status (True, False, Unknown);
	// "" when the Node was not read or has no Ready condition.
	Condition string `json:"condition"`
	// Reason and Message are the Ready condition's; when the Node was not
	// read they say why (Reason is then one of the Node* reasons below).
	Reason      string            `json:"reason"`
	Message     string            `json:"message"`
	Allocatable map[string]string `json:"allocatable,omitempty"`
	Capacity    map[string]string `json:"capacity,omitempty"`
	// InternalIP is the address the Node advertises (status.addresses),
	// which the API server connects to for logs, exec and port-forward.
	InternalIP string `json:"internalIP,omitempty"`
	// KubeletVersion and ContainerRuntimeVersion are what the Node's
	// kubelet reports (status.nodeInfo): each partition's own during a
	// canary (partition[].kubelet_binary, containerd_binary).
	KubeletVersion          string `json:"kubeletVersion,omitempty"`
	ContainerRuntimeVersion string `json:"containerRuntimeVersion,omitempty"`
}

// Reasons of a NodeStatus whose Node was not read, or has no Ready
// condition (docs/apply.md lists them).
const (
	NodeNotChecked       = "NotChecked"       // status --no-api
	NodeNotRecorded      = "NotRecorded"      // the record predates Node names
	NodeNoKubeconfig     = "NoKubeconfig"     // none planned, no --kubeconfig
	NodeNotJoined        = "NotJoined"        // the kubelet's kubeconfig does not exist yet
	NodeBadKubeconfig    = "BadKubeconfig"    // it exists but cannot be used
	NodeNotRegistered    = "NotRegistered"    // 404
	NodeUnauthorized     = "Unauthorized"     // 401
	NodeForbidden        = "Forbidden"        // 403
	NodeUnreachable      = "Unreachable"      // no HTTP answer
	NodeAPIError         = "APIError"         // any other answer
	NodeNoReadyCondition = "NoReadyCondition" // registered, no status posted yet
)

// Known says whether the Node was read: its readiness is then known.
func (n NodeStatus) Known() bool { return n.Condition != "" || n.Reason == NodeNoReadyCondition }

// nodeRequest is how a partition's Node is to be read, or, when Read is
// false, the status that says why it is not.
type nodeRequest struct {
	Read   bool
	Status NodeStatus
	// Own is true when the partition's own kubelet kubeconfig is used (it
	// lies below the root); false for the admin's --kubeconfig.
	Own bool
}

// planNode decides whether and with which kubeconfig p's Node is read.
// It is pure.
func planNode(p record.Partition, noAPI bool, adminKubeconfig string) nodeRequest {
	ns := NodeStatus{Name: p.NodeName, Kubeconfig: adminKubeconfig}
	if ns.Kubeconfig == "" {
		ns.Kubeconfig = p.Kubeconfig
	}
	skip := func(reason, msg string) nodeRequest {
		ns.Reason, ns.Message = reason, msg
		return nodeRequest{Status: ns}
	}
	switch {
	case noAPI:
		return skip(NodeNotChecked, "not checked (--no-api)")
	case p.NodeName == "":
		return skip(NodeNotRecorded, "the record has no Node name: it was written by an older numa-partition; the next apply that changes something records it")
	case ns.Kubeconfig == "":
		return skip(NodeNoKubeconfig, "no kubelet kubeconfig planned; give status --kubeconfig")
	}
	return nodeRequest{Read: true, Status: ns, Own: adminKubeconfig == ""}
}

// readNode reads the Node a nodeRequest names (I/O): with admin, the
// client of --kubeconfig, when there is one; else with the partition's
// own kubelet kubeconfig, read below root, dialing from root's network
// namespace as that kubelet does.
func readNode(ctx context.Context, o Options, r nodeRequest, admin *kubeapi.Client) (*corev1.Node, error) {
	if !r.Own {
		return admin.Node(ctx, r.Status.Name)
	}
	c, err := host.KubeletClient(o.Root, r.Status.Kubeconfig, o.ProbeTimeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Node(ctx, r.Status.Name)
}

// nodeResult turns what readNode returned into the status. It is pure.
func nodeResult(ns NodeStatus, n *corev1.Node, err error) NodeStatus {
	if err != nil {
		ns.Reason, ns.Message = nodeErrorReason(err), err.Error()
		if ns.Reason == NodeNotJoined {
			ns.Message = ns.Kubeconfig + " does not exist: the kubelet has not joined the cluster yet"
		}
		return ns
	}
	ns.KubeletVersion, ns.ContainerRuntimeVersion = n.Status.NodeInfo.KubeletVersion, n.Status.NodeInfo.ContainerRuntimeVersion
	ns.Allocatable = kubeapi.Quantities(n.Status.Allocatable)
	ns.Capacity = kubeapi.Quantities(n.Status.Capacity)
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && ns.InternalIP == "" {
			ns.InternalIP = a.Address
		}
	}
	c, ok := kubeapi.ReadyCondition(n)
	if !ok {
		ns.Reason, ns.Message = NodeNoReadyCondition, "the Node has no Ready condition: its kubelet has not posted a status yet"
		return ns
	}
	ns.Ready = c.Status == corev1.ConditionTrue
	ns.Condition, ns.Reason, ns.Message = string(c.Status), c.Reason, c.Message
	return ns
}

func nodeErrorReason(err error) string {
	var ke *kubeapi.KubeconfigError
	switch {
	case errors.As(err, &ke) && ke.Field == "" && errors.Is(err, fs.ErrNotExist):
		return NodeNotJoined
	case errors.As(err, &ke):
		return NodeBadKubeconfig
	case errors.Is(err, kubeapi.ErrNotRegistered):
		return NodeNotRegistered
	case errors.Is(err, kubeapi.ErrUnauthorized):
		return NodeUnauthorized
	case errors.Is(err, kubeapi.ErrForbidden):
		return NodeForbidden
	case errors.Is(err, kubeapi.ErrUnreachable):
		return NodeUnreachable
	}
	return NodeAPIError
}

// nodeProblem is the problem a partition's Node status is, "" for none.
// It is pure. A kubeconfig that does not exist yet is a problem only when
// the kubelet answers healthy: a kubelet that is down is its own problem,
// and one that is still bootstrapping has no kubeconfig yet.
func nodeProblem(partition string, ns NodeStatus, kubelet Probe) string {
	switch ns.Reason {
	case NodeNotChecked, NodeNotRecorded, NodeNoKubeconfig:
		return ""
	case NodeNotJoined:
		if !kubelet.OK {
			return ""
		}
		return fmt.Sprintf("kubelet of %s is healthy but has not joined: %s does not exist", partition, ns.Kubeconfig)
	}
	switch {
	case ns.Ready:
		return ""
	case ns.Known():
		why := ns.Reason
		if why == "" {
			why = "Ready=" + ns.Condition
		}
		if ns.Message != "" {
			why += " (" + ns.Message + ")"
		}
		return fmt.Sprintf("Node %s NotReady: %s", ns.Name, why)
	}
	return fmt.Sprintf("Node %s of %s: %s", ns.Name, partition, ns.Message)
}
