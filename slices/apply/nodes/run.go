package nodes

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
	"github.com/numa-partition/numa-partition/slices/apply/record"
)

// Run is the work of one command on the Nodes it disrupts: the admin
// client when there is one, each partition's client, and a Removal
// per target, in the targets' order.
type Run struct {
	c       Command
	verb    string // "remove" or "apply", for the hints
	targets []Target
	admin   *kubeapi.Client
	own     []*kubeapi.Client // the kubelets' clients opened, to close
	apis    []drain.API       // per target; nil: not asked
	removal []Removal
	keep    []string // Nodes not to delete: the API server could not be asked about them
	// eventClients are the clients of the partitions Events are recorded
	// on that are not targets (events.go), nil for none; by partition.
	eventClients map[string]drain.API
}

// client is the client partition p's Node is asked with: the admin's, or
// p's own kubelet's; nil with a note when there is none to ask (no Node
// name, no kubelet kubeconfig planned, a kubelet that never joined).
func (n *Run) client(p record.Partition) (api drain.API, kubeconfig, note string, err error) {
	switch {
	case p.NodeName == "":
		return nil, "", noNodeName, nil
	case n.admin != nil:
		return n.admin, n.c.Nodes.Kubeconfig, "", nil
	case p.Kubeconfig == "":
		return nil, "", "no kubelet kubeconfig planned: not checked", nil
	}
	c, err := host.KubeletClient(n.c.Root, p.Kubeconfig, 0)
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

// RemoveTargets are remove's: every partition of the record, going.
func RemoveTargets(rec *record.Record) []Target {
	out := make([]Target, 0, len(rec.Partitions))
	for _, p := range rec.Partitions {
		out = append(out, Target{Partition: p})
	}
	return out
}

// newRun opens the admin client when c has a kubeconfig.
func newRun(c Command, verb string, targets []Target) (*Run, error) {
	n := &Run{c: c, verb: verb, targets: targets, apis: make([]drain.API, len(targets))}
	for _, t := range targets {
		n.removal = append(n.removal, Removal{Partition: t.Name, Node: t.NodeName, Reason: t.Reason, Pods: []drain.Decision{}})
	}
	if c.Nodes.Kubeconfig != "" {
		cfg, err := kubeapi.Load("/", c.Nodes.Kubeconfig)
		if err != nil {
			return nil, err
		}
		n.admin = kubeapi.NewClient(cfg, kubeapi.Options{})
	}
	return n, nil
}

// Prepare does, under the lock and before anything on the host
// changes, what the targets' Nodes need: drain them, or refuse while pods
// are bound. Its error means nothing on the host was changed, and no Node
// is left cordoned by it. verb ("remove", "apply") names the command in
// the hints. beforeDrain, when set, is told which Nodes are about to be
// cordoned, once every check passed and before the first cordon (apply
// writes them down there, for a kill mid-drain); its error stops the
// drain before it starts.
func Prepare(ctx context.Context, c Command, verb string, targets []Target, beforeDrain func([]record.CordonedNode) error) (*Run, []string, error) {
	if len(targets) == 0 {
		return &Run{c: c, verb: verb}, nil, nil
	}
	n, err := newRun(c, verb, targets)
	if err != nil {
		return nil, nil, err
	}
	no := c.Nodes
	rules := drain.Rules{Force: no.Force && no.Drain, DeleteEmptyDirData: no.DeleteEmptyDirData}
	// Every Node is checked first: a refusal changes nothing anywhere.
	checks := &nodeChecks{}
	for i, t := range targets {
		n.checkNode(ctx, i, t, rules, checks)
	}
	warnings := checks.warnings
	if len(checks.behind) > 0 {
		how := "remove --kubeconfig FILE deletes them (an identity examples/drain-rbac.yaml allows)"
		if verb == "apply" { // the next apply will not know them: say it now
			how = "apply --kubeconfig FILE deletes them (an identity examples/drain-rbac.yaml allows), else kubectl delete node"
		}
		warnings = append(warnings, fmt.Sprintf("the Nodes %s stay in the API server, NotReady: %s", drain.Name(checks.behind), how))
	}
	if len(checks.refusals) > 0 {
		if c.DryRun || (no.Force && !no.Drain) {
			return n, append(warnings, checks.refusals...), nil
		}
		n.Close()
		return nil, nil, fmt.Errorf("%s\n(%s)", strings.Join(checks.refusals, "\n"), refusalHint(verb, no, n.admin != nil, checks.blind))
	}
	if !no.Drain || c.DryRun {
		return n, warnings, nil
	}
	if err := n.drainAll(ctx, targets, rules, beforeDrain); err != nil {
		n.Close()
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
func (n *Run) checkNode(ctx context.Context, i int, t Target, rules drain.Rules, c *nodeChecks) {
	no := n.c.Nodes
	p := t.Partition
	r := &n.removal[i]
	api, kubeconfig, note, err := n.client(p)
	r.Kubeconfig = kubeconfig
	if api == nil && err == nil {
		r.Note = note
		switch {
		case !t.Goes() && no.Drain:
			// Its kubelet's pods must be gone before the restart, and
			// nothing can make them go.
			c.refusals = append(c.refusals, fmt.Sprintf("partition %s: its Node cannot be drained: %s", p.Name, note))
		case p.NodeName == "" && t.Goes():
			c.warnings = append(c.warnings, fmt.Sprintf("partition %s: %s; its Node, if any, stays in the API server", p.Name, noNodeName))
		}
		return
	}
	if n.admin == nil && t.Goes() {
		c.behind = append(c.behind, p.NodeName)
	}
	var ds []drain.Decision
	var refusal *drain.Refusal
	if err == nil {
		var gates []drain.Block
		ds, gates, err = drain.Check(ctx, api, p.NodeName, rules)
		if n.c.DryRun && no.Drain { // the dry run shows the budgets
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
func (n *Run) drainAll(ctx context.Context, targets []Target, rules drain.Rules, beforeDrain func([]record.CordonedNode) error) error {
	no := n.c.Nodes
	if beforeDrain != nil {
		var cordon []record.CordonedNode
		for i, api := range n.apis {
			if api != nil {
				cordon = append(cordon, record.CordonedNode{Partition: n.removal[i].Partition, Node: n.removal[i].Node})
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
				n.event(ctx, i, corev1.EventTypeNormal, EventDrainStarted, drainStarted(targets[i], p, no.EffectiveTimeout()))
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
			return fmt.Errorf("partition %s: %w\n(nothing on the host was changed; %s)", r.Partition, err, n.Undo(ctx))
		}
		if res.Registered {
			n.event(ctx, i, corev1.EventTypeNormal, EventDrained, drained(res))
			r.Pods = res.Pods
		}
	}
	return nil
}

// Undo makes the Nodes this command cordoned schedulable again, for a
// command that gives up (the host stays as it was, and so should its
// Nodes), and says how that went, for the error.
func (n *Run) Undo(ctx context.Context) string {
	if err := n.Uncordon(ctx, "the "+n.verb+" gave up before it changed the host"); err != nil {
		return "uncordoning the Nodes this " + n.verb + " cordoned failed: " + err.Error()
	}
	return "the Nodes this " + n.verb + " cordoned are schedulable again"
}

// Uncordon makes the Nodes the drains cordoned schedulable again, each
// with its partition's client; why, for their Uncordoned Events, says
// why now.
func (n *Run) Uncordon(ctx context.Context, why string) error {
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
func refusalHint(verb string, no Options, admin, blind bool) string {
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
func bound(r Removal) string {
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

// Deletion is a Node to delete once its kubelet is stopped: what, for
// the report, and how.
type Deletion struct {
	What   string
	Delete func() error
}

// Deletions are the Node deletions done once the kubelets are stopped (a
// running one would register its Node again): each going partition's
// Node, with the admin identity; none without one.
func (n *Run) Deletions(ctx context.Context) []Deletion {
	if n == nil || n.admin == nil {
		return nil
	}
	var out []Deletion
	for i := range n.removal {
		r := &n.removal[i]
		if r.Node == "" || !n.targets[i].Goes() || slices.Contains(n.keep, r.Node) {
			continue
		}
		out = append(out, Deletion{"delete Node " + r.Node, func() error {
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

// Readmit waits, after apply's steps (begun at since), for each Node
// whose kubelet restarted on fresh state (and that this apply cordoned)
// to be Ready again, then uncordons it. A Node not Ready in time stays
// cordoned: its kubelet may still be failing, and new pods should not
// land on it; the warning says so.
func (n *Run) Readmit(ctx context.Context, since time.Time) (warnings []string) {
	if n == nil {
		return nil
	}
	for i := range n.removal {
		r, api := &n.removal[i], n.apis[i]
		if n.targets[i].Goes() || api == nil || r.Drain == nil || !r.Drain.Cordoned {
			continue
		}
		if err := waitReady(ctx, api, r.Node, since, n.c.Nodes.EffectiveTimeout(), n.c.Nodes.EffectivePoll()); err != nil {
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

// Close closes the clients n opened.
func (n *Run) Close() {
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
