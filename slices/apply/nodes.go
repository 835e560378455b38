package apply

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/kubeapi/drain"
	"github.com/numa-partition/numa-partition/slices/apply/host"
)

// What remove and apply do with the partitions' Kubernetes Nodes (#25).
// Stopping a kubelet for good leaves its pods bound in the API server and
// its Node behind, NotReady; restarting one on fresh CPU/Memory Manager
// state makes it forget the exclusive CPUs and pinned memory of the pods
// it runs. So, before anything on the host changes, the Nodes a command
// disrupts (every partition's for remove; for apply those affectedNodes
// picks) are either drained (--drain) or the command refuses while pods
// other than DaemonSet, mirror, finished and terminating pods are bound
// to one (unless --force). After the host's changes, a Node whose
// partition is gone is deleted, and one whose kubelet came back is
// uncordoned once Ready.
//
// Whose credentials: NodeOptions.Kubeconfig when given (an identity
// examples/drain-rbac.yaml allows), else each partition's own kubelet's.
// The Node authorizer and NodeRestriction let a kubelet list the pods
// bound to its Node, cordon and uncordon its own Node and evict the pods
// bound to it (kubelet's own evictions need that), which is all a drain
// needs; not read PodDisruptionBudgets (the API's 429 then names the
// budget) nor delete its Node, which takes the other identity.

// NodeOptions are remove's and apply's inputs about the partitions' Nodes.
type NodeOptions struct {
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
	// and restarts together (rolling.go); 1 when 0.
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

func (no NodeOptions) timeout() time.Duration {
	if no.Timeout <= 0 {
		return drain.DefaultTimeout
	}
	return no.Timeout
}

func (no NodeOptions) poll() time.Duration {
	if no.Poll <= 0 {
		return drain.DefaultPoll
	}
	return no.Poll
}

// Why a Node is disrupted (NodeRemoval.Reason; apply only).
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
)

// NodeRemoval is what remove or apply did (or, in a dry run, would do)
// with one partition's Node; part of `remove --output json` and `apply
// --output json` (docs/apply.md).
type NodeRemoval struct {
	Partition string `json:"partition"`
	// Node is the partition's Node name, "" when the record has none.
	Node string `json:"node"`
	// Reason is why apply disrupts this Node (ReasonFreshState,
	// ReasonNamespaceRebuilt, ReasonPartitionGone); absent in remove's,
	// where every Node goes.
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

// nodeTarget is a partition whose Node a command disrupts.
type nodeTarget struct {
	RecordPartition
	// Reason is ReasonFreshState, ReasonNamespaceRebuilt or
	// ReasonPartitionGone; "" for remove.
	Reason string
	// Unit is, for ReasonFreshState, the kubelet that restarts; for
	// ReasonNamespaceRebuilt, the unit whose restart rebuilds the
	// namespace.
	Unit string
}

// goes says whether the partition's kubelet stops for good: its Node is
// then deleted rather than uncordoned.
func (t nodeTarget) goes() bool {
	return t.Reason != ReasonFreshState && t.Reason != ReasonNamespaceRebuilt
}

// nodeRun is the work of one command on the Nodes it disrupts: the admin
// client when there is one, each partition's client, and a NodeRemoval
// per target, in the targets' order.
type nodeRun struct {
	o       Options
	verb    string // "remove" or "apply", for the hints
	targets []nodeTarget
	admin   *kubeapi.Client
	own     []*kubeapi.Client // the kubelets' clients opened, to close
	apis    []drain.API       // per target; nil: not asked
	removal []NodeRemoval
	keep    []string // Nodes not to delete: the API server could not be asked about them
	// eventClients are the clients of the partitions Events are recorded
	// on that are not targets (events.go), nil for none; by partition.
	eventClients map[string]drain.API
}

// client is the client partition p's Node is asked with: the admin's, or
// p's own kubelet's; nil with a note when there is none to ask (no Node
// name, no kubelet kubeconfig planned, a kubelet that never joined).
func (n *nodeRun) client(p RecordPartition) (api drain.API, kubeconfig, note string, err error) {
	switch {
	case p.NodeName == "":
		return nil, "", noNodeName, nil
	case n.admin != nil:
		return n.admin, n.o.Nodes.Kubeconfig, "", nil
	case p.Kubeconfig == "":
		return nil, "", "no kubelet kubeconfig planned: not checked", nil
	}
	c, err := host.KubeletClient(n.o.Root, p.Kubeconfig, 0)
	var ke *kubeapi.KubeconfigError
	if errors.As(err, &ke) && ke.Field == "" && errors.Is(err, fs.ErrNotExist) {
		return nil, "", p.Kubeconfig + " does not exist: the kubelet never joined, there is no Node to check", nil
	}
	if err != nil {
		return nil, p.Kubeconfig, "", err
	}
	n.own = append(n.own, c)
	return c, p.Kubeconfig, "", nil
}

// removeTargets are remove's: every partition of the record, going.
func removeTargets(rec *Record) []nodeTarget {
	out := make([]nodeTarget, 0, len(rec.Partitions))
	for _, p := range rec.Partitions {
		out = append(out, nodeTarget{RecordPartition: p})
	}
	return out
}

// newNodeRun opens the admin client when o has a kubeconfig.
func newNodeRun(o Options, verb string, targets []nodeTarget) (*nodeRun, error) {
	n := &nodeRun{o: o, verb: verb, targets: targets, apis: make([]drain.API, len(targets))}
	for _, t := range targets {
		n.removal = append(n.removal, NodeRemoval{Partition: t.Name, Node: t.NodeName, Reason: t.Reason, Pods: []drain.Decision{}})
	}
	if o.Nodes.Kubeconfig != "" {
		cfg, err := kubeapi.Load("/", o.Nodes.Kubeconfig)
		if err != nil {
			return nil, err
		}
		n.admin = kubeapi.NewClient(cfg, kubeapi.Options{})
	}
	return n, nil
}

// prepareNodes does, under the lock and before anything on the host
// changes, what the targets' Nodes need: drain them, or refuse while pods
// are bound. Its error means nothing on the host was changed, and no Node
// is left cordoned by it. verb ("remove", "apply") names the command in
// the hints. beforeDrain, when set, is told which Nodes are about to be
// cordoned, once every check passed and before the first cordon (apply
// writes them down there, for a kill mid-drain); its error stops the
// drain before it starts.
func prepareNodes(ctx context.Context, o Options, verb string, targets []nodeTarget, beforeDrain func([]CordonedNode) error) (*nodeRun, []string, error) {
	if len(targets) == 0 {
		return &nodeRun{o: o, verb: verb}, nil, nil
	}
	n, err := newNodeRun(o, verb, targets)
	if err != nil {
		return nil, nil, err
	}
	no := o.Nodes
	rules := drain.Rules{Force: no.Force && no.Drain, DeleteEmptyDirData: no.DeleteEmptyDirData}
	// Every Node is checked first: a refusal changes nothing anywhere.
	c := &nodeChecks{}
	for i, t := range targets {
		n.checkNode(ctx, i, t, rules, c)
	}
	warnings := c.warnings
	if len(c.behind) > 0 {
		how := "remove --kubeconfig FILE deletes them (an identity examples/drain-rbac.yaml allows)"
		if verb == "apply" { // the next apply will not know them: say it now
			how = "apply --kubeconfig FILE deletes them (an identity examples/drain-rbac.yaml allows), else kubectl delete node"
		}
		warnings = append(warnings, fmt.Sprintf("the Nodes %s stay in the API server, NotReady: %s", drain.Name(c.behind), how))
	}
	if len(c.refusals) > 0 {
		if o.DryRun || (no.Force && !no.Drain) {
			return n, append(warnings, c.refusals...), nil
		}
		n.close()
		return nil, nil, fmt.Errorf("%s\n(%s)", strings.Join(c.refusals, "\n"), refusalHint(verb, no, n.admin != nil, c.blind))
	}
	if !no.Drain || o.DryRun {
		return n, warnings, nil
	}
	if err := n.drainAll(ctx, targets, rules, beforeDrain); err != nil {
		n.close()
		return nil, nil, err
	}
	return n, warnings, nil
}

// nodeChecks is what checking the targets' Nodes found, before anything
// changes.
type nodeChecks struct {
	warnings, refusals []string
	// behind are the Nodes of partitions that go which only their own
	// kubelet could delete, and nothing here will.
	behind []string
	blind  bool // a Node's pods could not be listed
}

// checkNode checks target i's Node: whether it can be asked about, which
// pods are bound to it and whether they refuse the command.
func (n *nodeRun) checkNode(ctx context.Context, i int, t nodeTarget, rules drain.Rules, c *nodeChecks) {
	no := n.o.Nodes
	p := t.RecordPartition
	r := &n.removal[i]
	api, kubeconfig, note, err := n.client(p)
	r.Kubeconfig = kubeconfig
	if api == nil && err == nil {
		r.Note = note
		switch {
		case !t.goes() && no.Drain:
			// Its kubelet's pods must be gone before the restart, and
			// nothing can make them go.
			c.refusals = append(c.refusals, fmt.Sprintf("partition %s: its Node cannot be drained: %s", p.Name, note))
		case p.NodeName == "" && t.goes():
			c.warnings = append(c.warnings, fmt.Sprintf("partition %s: %s; its Node, if any, stays in the API server", p.Name, noNodeName))
		}
		return
	}
	if n.admin == nil && t.goes() {
		c.behind = append(c.behind, p.NodeName)
	}
	var ds []drain.Decision
	var refusal *drain.Refusal
	if err == nil {
		var gates []drain.Block
		ds, gates, err = drain.Check(ctx, api, p.NodeName, rules)
		if n.o.DryRun && no.Drain { // the dry run shows the budgets
			r.Budgets = gates
		}
		if errors.As(err, &refusal) {
			err = nil
		}
	}
	if err != nil {
		whose := "its kubelet's credentials"
		if n.admin != nil {
			whose = no.Kubeconfig
		}
		msg := fmt.Sprintf("partition %s: cannot see which pods are bound to Node %s with %s: %v", p.Name, p.NodeName, whose, err)
		if no.Force && !no.Drain {
			// Forced: the host changes; the Node, which the API server
			// could not be asked about, stays.
			r.Note = "not checked, not deleted: " + err.Error()
			c.warnings = append(c.warnings, msg+"; its Node stays in the API server")
			n.keep = append(n.keep, p.NodeName)
			return
		}
		c.refusals, c.blind = append(c.refusals, msg), true
		return
	}
	r.Checked, r.Pods, n.apis[i] = true, ds, api
	switch {
	case refusal != nil && no.Drain:
		c.refusals = append(c.refusals, fmt.Sprintf("partition %s: %v", p.Name, refusal))
	case !no.Drain:
		if msg := bound(*r); msg != "" {
			c.refusals = append(c.refusals, msg)
		}
	}
}

// drainAll tells beforeDrain which Nodes it is about to cordon, then
// drains them one at a time, as kubectl drain does with several Nodes:
// the pods of one find room elsewhere before the next is cordoned. On an
// error nothing on the host changed and the Nodes it cordoned are let go.
func (n *nodeRun) drainAll(ctx context.Context, targets []nodeTarget, rules drain.Rules, beforeDrain func([]CordonedNode) error) error {
	no := n.o.Nodes
	if beforeDrain != nil {
		var cordon []CordonedNode
		for i, api := range n.apis {
			if api != nil {
				cordon = append(cordon, CordonedNode{Partition: n.removal[i].Partition, Node: n.removal[i].Node})
			}
		}
		if err := beforeDrain(cordon); err != nil {
			return err
		}
	}
	for i, api := range n.apis {
		if api == nil {
			continue
		}
		r := &n.removal[i]
		progress := func(p drain.Progress) {
			if p.Phase == drain.PhaseCordoned {
				n.event(ctx, i, corev1.EventTypeNormal, EventDrainStarted, drainStarted(targets[i], p, no.timeout()))
			}
			if no.Progress != nil {
				no.Progress(p)
			}
		}
		res, err := drain.Drain(ctx, api, r.Node, drain.Options{Rules: rules, Timeout: no.Timeout, Progress: progress})
		r.Drain = res
		if err != nil {
			if res.Registered {
				n.event(ctx, i, corev1.EventTypeWarning, EventDrainFailed, "nothing on the host was changed: "+err.Error())
			}
			return fmt.Errorf("partition %s: %w\n(nothing on the host was changed; %s)", r.Partition, err, n.undo(ctx))
		}
		if res.Registered {
			n.event(ctx, i, corev1.EventTypeNormal, EventDrained, drained(res))
			r.Pods = res.Pods
		}
	}
	return nil
}

// undo makes the Nodes this command cordoned schedulable again, for a
// command that gives up (the host stays as it was, and so should its
// Nodes), and says how that went, for the error.
func (n *nodeRun) undo(ctx context.Context) string {
	if err := n.uncordon(ctx, "the "+n.verb+" gave up before it changed the host"); err != nil {
		return "uncordoning the Nodes this " + n.verb + " cordoned failed: " + err.Error()
	}
	return "the Nodes this " + n.verb + " cordoned are schedulable again"
}

// uncordon makes the Nodes the drains cordoned schedulable again, each
// with its partition's client; why, for their Uncordoned Events, says
// why now.
func (n *nodeRun) uncordon(ctx context.Context, why string) error {
	if n == nil {
		return nil
	}
	var errs []error
	for i, r := range n.removal {
		if n.apis[i] == nil || r.Drain == nil || !r.Drain.Cordoned {
			continue
		}
		if err := drain.Uncordon(ctx, n.apis[i], []*drain.Result{r.Drain}); err != nil {
			errs = append(errs, err)
			continue
		}
		n.event(ctx, i, corev1.EventTypeNormal, EventUncordoned, "uncordoned: "+why)
	}
	return errors.Join(errs...)
}

// refusalHint says what would let a refused remove or apply (verb) go
// ahead. It is pure.
func refusalHint(verb string, no NodeOptions, admin, blind bool) string {
	if no.Drain {
		return "nothing was changed"
	}
	force := map[string][2]string{
		"remove": {"--force removes the partitions regardless, leaving those Nodes", "--force removes the partitions with them bound"},
		"apply":  {"--force applies regardless, leaving those Nodes", "--force applies with them bound"},
	}[verb]
	if blind {
		h := force[0]
		if !admin {
			h = verb + " --kubeconfig FILE asks with an identity examples/drain-rbac.yaml allows; " + h
		}
		return h
	}
	h := verb + " --drain evicts them first, honouring their PodDisruptionBudgets; " + force[1]
	if admin {
		h += " (their Nodes are deleted, and what a controller manages is recreated elsewhere)"
	}
	return h
}

const noNodeName = "the record has no Node name (written by an older numa-partition)"

// bound is the refusal of a plain remove (or apply) for r's Node, ""
// when no pod that a stopped kubelet would strand is bound to it: pods a
// drain would evict or refuse (not DaemonSet, mirror, finished or
// terminating pods). It is pure.
func bound(r NodeRemoval) string {
	var names []string
	for _, d := range r.Pods {
		if d.Action == drain.Evict || d.Action == drain.Refuse {
			names = append(names, d.String())
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("partition %s: %d pods are bound to Node %s (%s)", r.Partition, len(names), r.Node, drain.Name(names))
}

// deletions are the Node deletions done once the kubelets are stopped (a
// running one would register its Node again): each going partition's
// Node, with the admin identity; none without one.
func (n *nodeRun) deletions(ctx context.Context) []leftover {
	if n == nil || n.admin == nil {
		return nil
	}
	var out []leftover
	for i := range n.removal {
		r := &n.removal[i]
		if r.Node == "" || !n.targets[i].goes() || slices.Contains(n.keep, r.Node) {
			continue
		}
		out = append(out, leftover{"delete Node " + r.Node, func() error {
			err := n.admin.DeleteNode(ctx, r.Node)
			if err != nil && !errors.Is(err, kubeapi.ErrNotFound) {
				return fmt.Errorf("partition %s: deleting Node %s: %w", r.Partition, r.Node, err)
			}
			r.Deleted = true
			return nil
		}})
	}
	return out
}

// readmit waits, after apply's steps (begun at since), for each Node
// whose kubelet restarted on fresh state (and that this apply cordoned)
// to be Ready again, then uncordons it. A Node not Ready in time stays
// cordoned: its kubelet may still be failing, and new pods should not
// land on it; the warning says so.
func (n *nodeRun) readmit(ctx context.Context, since time.Time) (warnings []string) {
	if n == nil {
		return nil
	}
	for i := range n.removal {
		r, api := &n.removal[i], n.apis[i]
		if n.targets[i].goes() || api == nil || r.Drain == nil || !r.Drain.Cordoned {
			continue
		}
		if err := waitReady(ctx, api, r.Node, since, n.o.Nodes.timeout(), n.o.Nodes.poll()); err != nil {
			r.Note = "left cordoned: " + err.Error()
			warnings = append(warnings, fmt.Sprintf("partition %s: Node %s left cordoned: %v; kubectl uncordon %s once it is Ready", r.Partition, r.Node, err, r.Node))
			continue
		}
		if err := drain.Uncordon(ctx, api, []*drain.Result{r.Drain}); err != nil {
			r.Note = "left cordoned: " + err.Error()
			warnings = append(warnings, fmt.Sprintf("partition %s: %v; kubectl uncordon %s", r.Partition, err, r.Node))
			continue
		}
		r.Uncordoned = true
		n.event(ctx, i, corev1.EventTypeNormal, EventUncordoned, "uncordoned: Ready again since "+n.targets[i].Unit+" restarted")
	}
	return warnings
}

// waitReady polls Node name until its Ready condition is True with a
// heartbeat from since on, for at most timeout. The heartbeat matters:
// right after a restart the Node still shows the Ready its kubelet
// reported before, and kubelet reports anew as soon as it starts (with
// this host's clock, which since is read from).
func waitReady(ctx context.Context, api drain.API, name string, since time.Time, timeout, poll time.Duration) error {
	deadline := time.Now().Add(timeout)
	since = since.Truncate(time.Second) // a heartbeat has whole seconds
	last := "not read yet"
	for {
		node, err := api.Node(ctx, name)
		switch {
		case err != nil:
			last = err.Error()
		default:
			c, ok := kubeapi.ReadyCondition(node)
			switch {
			case !ok:
				last = "no Ready condition"
			case c.Status != corev1.ConditionTrue:
				last = "Ready is " + string(c.Status) + " (" + c.Reason + ")"
			case c.LastHeartbeatTime.Time.Before(since):
				last = "its kubelet has not reported since the restart"
			default:
				return nil
			}
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("not Ready after %s: %s", timeout, last)
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting for Node %s to be Ready: %w", name, ctx.Err())
		case <-t.C:
		}
	}
}

func (n *nodeRun) close() {
	if n == nil {
		return
	}
	if n.admin != nil {
		n.admin.Close()
	}
	for _, c := range n.own {
		c.Close()
	}
}
