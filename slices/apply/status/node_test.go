package status

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
	"github.com/numa-partition/numa-partition/slices/apply/record"
)

func TestPlanNode(t *testing.T) {
	own := record.Partition{Name: "node0", NodeName: "host-node0", Kubeconfig: "/etc/kubernetes/kubelet-node0.conf"}
	for _, c := range []struct {
		name   string
		p      record.Partition
		noAPI  bool
		admin  string
		read   bool
		own    bool
		reason string
		kc     string
	}{
		{"own kubelet kubeconfig", own, false, "", true, true, "", own.Kubeconfig},
		{"admin kubeconfig wins", own, false, "/root/.kube/config", true, false, "", "/root/.kube/config"},
		{"--no-api", own, true, "", false, false, NodeNotChecked, own.Kubeconfig},
		{"old record", record.Partition{Name: "node0", KubeletHealthz: 10248}, false, "/root/.kube/config", false, false, NodeNotRecorded, "/root/.kube/config"},
		{"no kubeconfig planned", record.Partition{Name: "node0", NodeName: "host-node0"}, false, "", false, false, NodeNoKubeconfig, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := planNode(c.p, c.noAPI, c.admin)
			if r.Read != c.read || r.Own != c.own || r.Status.Reason != c.reason || r.Status.Kubeconfig != c.kc || r.Status.Name != c.p.NodeName {
				t.Errorf("planNode: %+v", r)
			}
			if !r.Read && nodeProblem(c.p.Name, r.Status, Probe{OK: true}) != "" {
				t.Errorf("a Node not checked is a problem: %q", nodeProblem(c.p.Name, r.Status, Probe{OK: true}))
			}
		})
	}
}

// TestNodeResultAndProblem: what each answer makes of the Node's status,
// and which of them are problems.
func TestNodeResultAndProblem(t *testing.T) {
	base := NodeStatus{Name: "host-node0", Kubeconfig: "/etc/kubernetes/kubelet-node0.conf"}
	notFound := &kubeapi.KubeconfigError{File: base.Kubeconfig, Err: os.ErrNotExist}
	healthy, down := Probe{OK: true}, Probe{Detail: "unreachable"}
	for _, c := range []struct {
		name                   string
		node                   *corev1.Node
		err                    error
		kubelet                Probe
		ready                  bool
		condition, reason, msg string
		problem                string // "" none; else a substring
		allocatable            bool
	}{
		{"Ready", kubeapitest.Node("host-node0", corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"), nil, healthy,
			true, "True", "KubeletReady", "kubelet is posting ready status", "", true},
		{"NotReady", kubeapitest.Node("host-node0", corev1.ConditionFalse, "KubeletNotReady", "container runtime network not ready"), nil, healthy,
			false, "False", "KubeletNotReady", "container runtime network not ready", "Node host-node0 NotReady: KubeletNotReady (container runtime network not ready)", true},
		{"Unknown", kubeapitest.Node("host-node0", corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."), nil, down,
			false, "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.", "Node host-node0 NotReady: NodeStatusUnknown", true},
		{"no Ready condition", kubeapitest.Node("host-node0", "", "", ""), nil, healthy,
			false, "", NodeNoReadyCondition, "has not posted a status", "Node host-node0 NotReady: NoReadyCondition", true},
		{"not joined, kubelet healthy", nil, notFound, healthy,
			false, "", NodeNotJoined, "kubelet-node0.conf does not exist", "kubelet of node0 is healthy but has not joined: /etc/kubernetes/kubelet-node0.conf does not exist", false},
		{"not joined, kubelet down", nil, notFound, down,
			false, "", NodeNotJoined, "has not joined the cluster yet", "", false},
		{"bad kubeconfig", nil, &kubeapi.KubeconfigError{File: base.Kubeconfig, Field: "current-context", Err: errors.New("not set")}, down,
			false, "", NodeBadKubeconfig, "current-context: not set", "Node host-node0 of node0: kubeconfig /etc/kubernetes/kubelet-node0.conf: current-context: not set", false},
		{"not registered", nil, fmt.Errorf("%w: GET …: 404 Not Found", kubeapi.ErrNotRegistered), healthy,
			false, "", NodeNotRegistered, "Node not registered", "Node host-node0 of node0: Node not registered", false},
		{"forbidden", nil, fmt.Errorf("%w: GET …: 403 Forbidden: nodes is forbidden", kubeapi.ErrForbidden), healthy,
			false, "", NodeForbidden, "403", "403 Forbidden", false},
		{"unauthorized", nil, fmt.Errorf("%w: GET …: 401 Unauthorized", kubeapi.ErrUnauthorized), healthy,
			false, "", NodeUnauthorized, "401", "401 Unauthorized", false},
		{"unreachable", nil, fmt.Errorf("%w: dial tcp: connection refused", kubeapi.ErrUnreachable), healthy,
			false, "", NodeUnreachable, "connection refused", "API server unreachable", false},
		{"other", nil, errors.New("GET …: 500 Internal Server Error"), healthy,
			false, "", NodeAPIError, "500", "500", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.node != nil {
				c.node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "h"}, {Type: corev1.NodeInternalIP, Address: "10.212.0.2"}}
				c.node.Status.NodeInfo.KubeletVersion, c.node.Status.NodeInfo.ContainerRuntimeVersion = "v1.37.3", "containerd://2.2.1"
			}
			ns := nodeResult(base, c.node, c.err)
			// Each partition's versions, as its kubelet reports them (a canary's differ).
			if want := map[bool][2]string{true: {"v1.37.3", "containerd://2.2.1"}}[c.node != nil]; [2]string{ns.KubeletVersion, ns.ContainerRuntimeVersion} != want {
				t.Errorf("versions %q %q, want %q", ns.KubeletVersion, ns.ContainerRuntimeVersion, want)
			}
			if want := map[bool]string{true: "10.212.0.2", false: ""}[c.node != nil]; ns.InternalIP != want {
				t.Errorf("InternalIP %q, want %q", ns.InternalIP, want)
			}
			if ns.Ready != c.ready || ns.Condition != c.condition || ns.Reason != c.reason || !strings.Contains(ns.Message, c.msg) {
				t.Errorf("status %+v, want ready %v condition %q reason %q message ~%q", ns, c.ready, c.condition, c.reason, c.msg)
			}
			if (ns.Allocatable["cpu"] == "4" && ns.Capacity["memory"] == "16Gi") != c.allocatable {
				t.Errorf("allocatable %v capacity %v", ns.Allocatable, ns.Capacity)
			}
			p := nodeProblem("node0", ns, c.kubelet)
			if (p == "") != (c.problem == "") || !strings.Contains(p, c.problem) {
				t.Errorf("problem %q, want ~%q", p, c.problem)
			}
		})
	}
}

// TestReadNode: the partition's own kubelet kubeconfig (certificate and
// key in one PEM, as after TLS bootstrap), and an admin client, against a
// fake API server that authorizes like the Node authorizer.
func TestReadNode(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	s.SetNode(kubeapitest.Node("host-node0", corev1.ConditionTrue, "KubeletReady", ""))
	s.SetNode(kubeapitest.Node("host-node1", corev1.ConditionFalse, "KubeletNotReady", "PLEG is not healthy"))
	dir := t.TempDir()
	kubelet := func(node string) string {
		cert, key := s.CA.Client(t, "system:node:"+node, "system:nodes")
		pem := filepath.Join(dir, "var/lib/kubelet-"+node, "pki/kubelet-client-current.pem")
		kc := filepath.Join(dir, "etc/kubernetes/kubelet-"+node+".conf")
		must(t, os.MkdirAll(filepath.Dir(pem), 0o700))
		must(t, os.MkdirAll(filepath.Dir(kc), 0o755))
		must(t, os.WriteFile(pem, append(cert, key...), 0o600))
		must(t, os.WriteFile(kc, s.Kubeconfig(t, map[string]string{"client-certificate": pem, "client-key": pem}), 0o600))
		return kc
	}
	o := Options{Root: "/", ProbeTimeout: 5 * time.Second}
	ctx := context.Background()
	check := func(p record.Partition, admin *kubeapi.Client, adminPath string) NodeStatus {
		t.Helper()
		r := planNode(p, false, adminPath)
		if !r.Read {
			t.Fatalf("planNode %+v: not read", r)
		}
		n, err := readNode(ctx, o, r, admin)
		return nodeResult(r.Status, n, err)
	}

	ns := check(record.Partition{Name: "node0", NodeName: "host-node0", Kubeconfig: kubelet("host-node0")}, nil, "")
	if !ns.Ready || ns.Reason != "KubeletReady" || ns.Allocatable["memory"] != "8Gi" {
		t.Errorf("own Node: %+v", ns)
	}
	// A kubelet's credentials read only its own Node.
	ns = check(record.Partition{Name: "node1", NodeName: "host-node1", Kubeconfig: kubelet("host-node0")}, nil, "")
	if ns.Reason != NodeForbidden || !strings.Contains(ns.Message, "only its own Node object") {
		t.Errorf("another Node with a kubelet's credentials: %+v", ns)
	}
	ns = check(record.Partition{Name: "node2", NodeName: "host-node2", Kubeconfig: filepath.Join(dir, "etc/kubernetes/kubelet-node2.conf")}, nil, "")
	if ns.Reason != NodeNotJoined {
		t.Errorf("no kubeconfig yet: %+v", ns)
	}

	cert, key := s.CA.Client(t, "admin", "system:masters")
	must(t, os.WriteFile(filepath.Join(dir, "admin.pem"), append(cert, key...), 0o600))
	adminPath := filepath.Join(dir, "admin.conf")
	must(t, os.WriteFile(adminPath, s.Kubeconfig(t, map[string]string{"client-certificate": "admin.pem", "client-key": "admin.pem"}), 0o600))
	cfg, err := kubeapi.Load("/", adminPath)
	must(t, err)
	admin := kubeapi.NewClient(cfg, kubeapi.Options{Timeout: o.ProbeTimeout})
	defer admin.Close()
	ns = check(record.Partition{Name: "node1", NodeName: "host-node1", Kubeconfig: "/does/not/matter"}, admin, adminPath)
	if ns.Ready || ns.Condition != "False" || ns.Kubeconfig != adminPath || ns.Message != "PLEG is not healthy" {
		t.Errorf("admin read of a NotReady Node: %+v", ns)
	}
	ns = check(record.Partition{Name: "node3", NodeName: "host-node3"}, admin, adminPath)
	if ns.Reason != NodeNotRegistered || nodeProblem("node3", ns, Probe{OK: true}) == "" {
		t.Errorf("unregistered Node: %+v", ns)
	}
}
