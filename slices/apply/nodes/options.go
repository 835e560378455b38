package nodes

import (
	"log/slog"
	"time"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/slices/apply/record"
)

// Command is what the Nodes' work takes of the command that disrupts
// them (apply's or remove's options): where the host is, whether it is a
// dry run, the Nodes' options, and where to log and record Events.
type Command struct {
	Root   string // the host's root; a partition's kubelet kubeconfig lies below it
	DryRun bool
	Nodes  Options
	Log    *slog.Logger
	// Events records on the partitions' Nodes (events.go); nil records
	// nothing (a dry run).
	Events *kubeapi.EventRecorder
}

// Options are remove's and apply's inputs about the partitions' Nodes.
type Options struct {
	// Kubeconfig, a file on this machine (not below Root), is an identity
	// allowed to cordon Nodes, evict pods, read PodDisruptionBudgets and
	// delete Nodes. Without it each partition's Node is asked about (and
	// drained) with that partition's own kubelet credentials (below Root),
	// and the Nodes of partitions that go stay in the API server.
	Kubeconfig string
	// Drain cordons and drains each disrupted partition's Node, one at a
	// time, before anything on the host changes.
	Drain bool
	// Force: without Drain, go ahead even while pods are bound, or when
	// which are cannot be found out; with Drain, evict pods no controller
	// manages too (kubectl drain --force).
	Force bool
	// MaxUnavailable is how many partitions' Nodes a rolling apply drains
	// and restarts together (slices/apply's rolling.go); 1 when 0.
	MaxUnavailable int
	// DeleteEmptyDirData lets Drain evict pods with emptyDir volumes.
	DeleteEmptyDirData bool
	// Timeout bounds the drain of one Node (drain.DefaultTimeout when 0);
	// apply also waits this long, after a drain, for the kubelet to let go
	// of the pods in its manager state, and after the restart for the
	// Node to be Ready again.
	Timeout time.Duration
	// Progress is told how each drain goes.
	Progress func(drain.Progress)
	// Poll is how often apply looks whether a kubelet let go of its pods
	// or its Node is Ready (drain.DefaultPoll when 0; tests shorten it).
	Poll time.Duration
}

// EffectiveTimeout is Timeout, drain.DefaultTimeout when unset.
func (no Options) EffectiveTimeout() time.Duration {
	if no.Timeout <= 0 {
		return drain.DefaultTimeout
	}
	return no.Timeout
}

// EffectivePoll is Poll, drain.DefaultPoll when unset.
func (no Options) EffectivePoll() time.Duration {
	if no.Poll <= 0 {
		return drain.DefaultPoll
	}
	return no.Poll
}

// Why a Node is disrupted (Removal.Reason; apply only).
const (
	// ReasonFreshState: the partition's kubelet restarts on fresh CPU and
	// Memory Manager state while that state holds pods' exclusive CPUs or
	// pinned memory; its Node is uncordoned once Ready again.
	ReasonFreshState = "freshKubeletState"
	// ReasonPartitionGone: the partition is in the applied record but not
	// in the new plan (or its Node name changes), so its units go; its
	// Node is deleted.
	ReasonPartitionGone = "partitionGone"
	// ReasonNamespaceRebuilt: apply restarts the unit that holds the
	// partition's mount namespace (or a network unit it is part of):
	// containerd and kubelet restart in a new namespace and every pod of
	// the partition is re-created; its Node is uncordoned once Ready
	// again.
	ReasonNamespaceRebuilt = "namespaceRebuilt"
	// ReasonNewSoftware: the partition's kubelet or containerd moves to
	// another executable (kubelet.binary, runtime.binary, or the
	// partition's kubelet_binary, containerd_binary), an upgrade or its
	// canary. Only apply --drain disrupts its Node for it, as kubeadm's
	// upgrade drains a Node before its kubelet moves; without --drain
	// the daemons restart in place and their pods keep running. Its Node
	// is uncordoned once Ready again.
	ReasonNewSoftware = "newSoftware"
)

// Removal is what remove or apply did (or, in a dry run, would do)
// with one partition's Node; part of `remove --output json` and `apply
// --output json` (docs/apply.md).
type Removal struct {
	Partition string `json:"partition"`
	// Node is the partition's Node name, "" when the record has none.
	Node string `json:"node"`
	// Reason is why apply disrupts this Node (ReasonFreshState,
	// ReasonNamespaceRebuilt, ReasonNewSoftware, ReasonPartitionGone);
	// absent in remove's, where every Node goes.
	Reason string `json:"reason,omitempty"`
	// Kubeconfig is the one the API server was asked with: --kubeconfig,
	// or the partition's kubelet's; "" when it was not asked.
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// Checked is true when the pods bound to the Node were listed.
	Checked bool `json:"checked"`
	// Pods are the pods found bound to it (plain remove), with what a drain
	// would do (or, with drain, did) with each.
	Pods []drain.Decision `json:"pods"`
	// Budgets are, in a dry run with --drain, the PodDisruptionBudgets
	// that will gate the evictions: the pods each selects and its state.
	Budgets []drain.Block `json:"budgets,omitempty"`
	// Drain is what --drain did; absent without it, and in a dry run.
	Drain *drain.Result `json:"drain,omitempty"`
	// Actions are, in apply's report, what apply does with the Node, in
	// order ("cordon", "evict 2 pods (a/x, a/y)", "delete Node", ...).
	Actions []string `json:"actions,omitempty"`
	// Uncordoned is true when apply made the Node schedulable again after
	// its kubelet came back Ready.
	Uncordoned bool `json:"uncordoned,omitempty"`
	// Deleted is true when the Node object was deleted (or the API
	// server had none).
	Deleted bool `json:"deleted"`
	// Note says why the Node was not checked, not deleted or not
	// uncordoned.
	Note string `json:"note,omitempty"`
}

// Target is a partition whose Node a command disrupts.
type Target struct {
	record.Partition
	// Reason is ReasonFreshState, ReasonNamespaceRebuilt,
	// ReasonNewSoftware or ReasonPartitionGone; "" for remove.
	Reason string
	// Unit is, for ReasonFreshState and ReasonNewSoftware, the kubelet
	// that restarts; for ReasonNamespaceRebuilt, the unit whose restart
	// rebuilds the namespace.
	Unit string
	// Software is, for ReasonNewSoftware, what moves, in words
	// ("kubelet /usr/bin/kubelet → /opt/k8s/kubelet").
	Software string
}

// Goes says whether the partition's kubelet stops for good (its
// partition goes, or remove removes it): its Node is then deleted rather
// than uncordoned.
func (t Target) Goes() bool {
	return t.Reason == ReasonPartitionGone || t.Reason == ""
}
