package drain

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/kubeapi"
)

// API is what a drain asks the API server; *kubeapi.Client is one.
type API interface {
	Node(ctx context.Context, name string) (*corev1.Node, error)
	SetUnschedulable(ctx context.Context, name string, on bool) error
	PodsOnNode(ctx context.Context, name string) ([]corev1.Pod, error)
	PodDisruptionBudgets(ctx context.Context, namespace string) ([]policyv1.PodDisruptionBudget, error)
	Evict(ctx context.Context, namespace, name string, uid types.UID) error
}

// DefaultTimeout bounds a drain when Options.Timeout is 0: evictions a
// budget holds back are retried, and evicted pods waited for, this long.
const DefaultTimeout = 5 * time.Minute

// DefaultPoll is how often a drain looks whether the evicted pods are gone.
const DefaultPoll = time.Second

// Options tune a drain.
type Options struct {
	Rules
	// Timeout bounds the whole drain of one Node (DefaultTimeout when 0).
	Timeout time.Duration
	// Progress, when set, is told how the drain goes: after the cordon,
	// after each round of evictions, while it waits for the pods to go.
	Progress func(Progress)
	// Poll is how often the pods are listed while waiting (DefaultPoll).
	Poll time.Duration
	// Sleep waits d or until ctx is done (tests pass a fake clock).
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
}

func (o *Options) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Phases of a Progress.
const (
	PhaseCordoned = "cordoned" // the Node is unschedulable; Total pods are to go
	PhaseEvicting = "evicting" // a round of evictions is done; Blocked held some back
	PhaseWaiting  = "waiting"  // every eviction is granted; Remaining pods are still there
)

// Progress is how a drain goes.
type Progress struct {
	Node      string
	Phase     string
	Evicted   int // evictions granted so far
	Total     int // pods to evict
	Remaining int // PhaseWaiting: evicted (or terminating) pods not gone yet
	// Blocked are the budgets that held evictions back in the last round.
	Blocked []Block
	// Retry is the wait before the next round (PhaseEvicting).
	Retry time.Duration
}

// Block is a PodDisruptionBudget that holds pods back.
type Block struct {
	Budget string   `json:"budget"` // namespace/name; "" when the API named none
	Pods   []string `json:"pods"`   // namespace/name
	// Detail is the budget's state ("needs 3 healthy pods, has 3, allows 0
	// disruptions"), or the API's own message when the budget could not
	// be read.
	Detail string `json:"detail"`
}

func (b Block) String() string {
	who := "PodDisruptionBudget " + b.Budget
	if b.Budget == "" {
		who = "the API server"
	}
	return fmt.Sprintf("%s holds back %s: %s", who, Name(b.Pods), b.Detail)
}

func (p Progress) String() string {
	switch p.Phase {
	case PhaseCordoned:
		return fmt.Sprintf("drain %s: cordoned, %d pods to evict", p.Node, p.Total)
	case PhaseWaiting:
		return fmt.Sprintf("drain %s: evicted %d of %d, waiting for %d pods to go", p.Node, p.Evicted, p.Total, p.Remaining)
	}
	s := fmt.Sprintf("drain %s: evicted %d of %d", p.Node, p.Evicted, p.Total)
	for _, b := range p.Blocked {
		s += "; " + b.String()
	}
	if p.Retry > 0 {
		s += fmt.Sprintf("; retrying in %s", p.Retry)
	}
	return s
}

// Result is what a drain did; its JSON is part of `remove --output json`.
type Result struct {
	Node string `json:"node"`
	// Registered is false when the API server has no such Node: there was
	// nothing to drain.
	Registered bool `json:"registered"`
	// Cordoned is true when this drain made the Node unschedulable (false
	// when it already was, or was not registered).
	Cordoned bool `json:"cordoned"`
	// Pods are the pods found bound to the Node and what the drain
	// decided for each (Evict: to be evicted; a drain that failed may not
	// have evicted them all).
	Pods []Decision `json:"pods"`
	// Evicted is how many evictions the API server granted.
	Evicted int     `json:"evicted"`
	Seconds float64 `json:"seconds"`
}

// Check lists Node name's pods and classifies them, changing nothing: a
// *Refusal when some may not be evicted under o.Rules. A Node that does
// not exist has no pods (errors.Is(err, kubeapi.ErrNotFound) is not an
// error here). It also says which PodDisruptionBudgets will gate the
// evictions (the pods it would evict, the budgets of their namespaces
// that select them, each budget's state now), what a dry run shows
// before a drain: a namespace whose budgets cannot be read (a kubelet's
// credentials may not list them) is a Block without a budget that says
// so.
func Check(ctx context.Context, api API, name string, r Rules) ([]Decision, []Block, error) {
	_, ds, gates, err := check(ctx, api, name, r)
	return ds, gates, err
}

// check is Check that also returns the pods as listed, by UID. A pod that more than
// one budget selects is refused (ReasonMultipleBudgets): the Eviction
// API answers 500 for it, whatever the budgets allow.
func check(ctx context.Context, api API, name string, r Rules) (map[types.UID]corev1.Pod, []Decision, []Block, error) {
	pods, err := api.PodsOnNode(ctx, name)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("listing the pods of Node %s: %w", name, err)
	}
	byUID := make(map[types.UID]corev1.Pod, len(pods))
	for _, p := range pods {
		byUID[p.UID] = p
	}
	ds := Classify(pods, r)
	gates := map[string]*Block{}
	budgets := map[string][]policyv1.PodDisruptionBudget{}
	unread := map[string]error{}
	for i, d := range ds {
		if d.Action != Evict {
			continue
		}
		pdbs, ok := budgets[d.Namespace]
		if _, failed := unread[d.Namespace]; !ok && !failed {
			var lerr error
			if pdbs, lerr = api.PodDisruptionBudgets(ctx, d.Namespace); lerr != nil {
				unread[d.Namespace] = lerr
			} else {
				budgets[d.Namespace] = pdbs
			}
		}
		if lerr, failed := unread[d.Namespace]; failed {
			addGate(gates, "", "namespace "+d.Namespace+": its PodDisruptionBudgets could not be read: "+lerr.Error(), d)
			continue
		}
		matched := Budgets(byUID[d.UID], pdbs)
		if len(matched) > 1 {
			ds[i].Action, ds[i].Reason = Refuse, ReasonMultipleBudgets
			for _, b := range matched {
				ds[i].Budgets = append(ds[i].Budgets, b.Namespace+"/"+b.Name)
			}
		}
		for _, b := range matched {
			addGate(gates, b.Namespace+"/"+b.Name, BudgetState(b), d)
		}
	}
	if refused := Select(ds, Refuse); len(refused) > 0 {
		return byUID, ds, sortedBlocks(gates), &Refusal{Node: name, Pods: refused}
	}
	return byUID, ds, sortedBlocks(gates), nil
}

// addGate adds d's pod to the gate of key, made with detail.
func addGate(gates map[string]*Block, key, detail string, d Decision) {
	g, ok := gates[key]
	if !ok {
		g = &Block{Budget: key, Detail: detail}
		gates[key] = g
	}
	g.Pods = append(g.Pods, d.String())
}

// Drain cordons Node name and evicts its pods (see the package comment).
// The Result says what was done even when it fails; then the Node stays
// cordoned (Uncordon puts it back when the caller gives up on it).
func Drain(ctx context.Context, api API, name string, o Options) (*Result, error) {
	o.defaults()
	t0 := o.Now()
	d := &drainRun{api: api, name: name, o: o, deadline: t0.Add(o.Timeout), res: &Result{Node: name, Pods: []Decision{}}}
	err := d.run(ctx)
	d.res.Seconds = o.Now().Sub(t0).Seconds()
	return d.res, err
}

// drainRun is one Drain: what its phases (cordon, evict, wait) share,
// and the Result each adds to as it goes, so that a failed drain still
// says what it did.
type drainRun struct {
	api      API
	name     string
	o        Options
	deadline time.Time // evictions and the wait for the pods to go end by it
	res      *Result
	total    int // the pods to evict, as progress counts them
}

// progress tells Options.Progress, when set, how the drain goes.
func (d *drainRun) progress(p Progress) {
	if d.o.Progress != nil {
		p.Node = d.name
		d.o.Progress(p)
	}
}

// run cordons the Node, evicts its pods and waits until the evicted
// ones are gone. A Node the API server does not know is not an error:
// there is nothing on it to drain.
func (d *drainRun) run(ctx context.Context) error {
	n, err := d.api.Node(ctx, d.name)
	if errors.Is(err, kubeapi.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Node %s: %w", d.name, err)
	}
	d.res.Registered = true
	if !n.Spec.Unschedulable {
		if err := d.api.SetUnschedulable(ctx, d.name, true); err != nil {
			return fmt.Errorf("cordoning Node %s: %w", d.name, err)
		}
		d.res.Cordoned = true
	}
	// Listed after the cordon: no pod is scheduled to it from now on.
	pods, ds, _, err := check(ctx, d.api, d.name, d.o.Rules)
	d.res.Pods = append(d.res.Pods, ds...)
	if err != nil {
		return err
	}
	pending := Select(ds, Evict)
	d.total = len(pending)
	d.progress(Progress{Phase: PhaseCordoned, Total: d.total})
	gone, err := d.evict(ctx, pods, pending, Select(ds, Wait))
	if err != nil {
		return err
	}
	return waitGone(ctx, d.api, d.name, gone, d.deadline, d.o, func(left int) {
		d.progress(Progress{Phase: PhaseWaiting, Evicted: d.res.Evicted, Total: d.total, Remaining: left})
	})
}

// evict evicts pending in rounds until none is left, backing off between
// rounds while budgets hold pods back, and returns gone with the evicted
// pods added: those the wait that follows is for.
func (d *drainRun) evict(ctx context.Context, pods map[types.UID]corev1.Pod, pending, gone []Decision) ([]Decision, error) {
	// round counts the rounds since one last granted an eviction: a
	// budget that just let a pod go is likely to let the next one go soon.
	for round := 1; len(pending) > 0; round++ {
		r, err := d.evictRound(ctx, pods, pending)
		if err != nil {
			return nil, err
		}
		gone = append(gone, r.evicted...)
		if len(r.held) < len(pending) {
			round = 1
		}
		pending = r.held
		if len(pending) == 0 {
			d.progress(Progress{Phase: PhaseEvicting, Evicted: d.res.Evicted, Total: d.total})
			break
		}
		if err := d.backOff(ctx, round, pending, r); err != nil {
			return nil, err
		}
	}
	return gone, nil
}

// evictionRound is what one round of evictions came to.
type evictionRound struct {
	evicted, held []Decision
	// retryAfter is the longest Retry-After of the held pods' answers.
	retryAfter time.Duration
	// blocks say what held the pods back: their budgets (blockedBy).
	blocks map[string]*Block
}

// evictRound asks once to evict each pending pod. A pod gone by itself
// counts as neither evicted nor held; a pod a budget holds back (429) is
// held, with the budget; any other answer ends the drain.
func (d *drainRun) evictRound(ctx context.Context, pods map[types.UID]corev1.Pod, pending []Decision) (evictionRound, error) {
	r := evictionRound{blocks: map[string]*Block{}}
	budgets := map[string][]policyv1.PodDisruptionBudget{} // this round's, by namespace
	for _, p := range pending {
		err := d.api.Evict(ctx, p.Namespace, p.Name, p.UID)
		var ae *kubeapi.APIError
		switch {
		case err == nil:
			d.res.Evicted++
			r.evicted = append(r.evicted, p)
		case errors.Is(err, kubeapi.ErrNotFound), errors.Is(err, kubeapi.ErrConflict):
			// Gone by itself, or replaced by a pod of the same name
			// (which, cordoned, is not on this Node).
		case errors.Is(err, kubeapi.ErrTooManyRequests) && errors.As(err, &ae):
			r.held = append(r.held, p)
			r.retryAfter = max(r.retryAfter, ae.RetryAfter)
			blockedBy(ctx, d.api, pods[p.UID], ae, budgets, r.blocks)
		default:
			return r, fmt.Errorf("evicting pod %s from Node %s: %w", p, d.name, err)
		}
	}
	return r, nil
}

// backOff waits before the next round, as long as Backoff says for this
// round and no longer than the deadline leaves; past the deadline it
// fails, naming the pods still held and the budgets that hold them.
func (d *drainRun) backOff(ctx context.Context, round int, pending []Decision, r evictionRound) error {
	bl := sortedBlocks(r.blocks)
	left := d.deadline.Sub(d.o.Now())
	if left <= 0 {
		return fmt.Errorf("draining Node %s: %d of %d pods still not evicted after %s (%s): %s",
			d.name, len(pending), d.total, d.o.Timeout, Name(refs(pending)), describe(bl))
	}
	wait := Backoff(round, r.retryAfter, left)
	d.progress(Progress{Phase: PhaseEvicting, Evicted: d.res.Evicted, Total: d.total, Blocked: bl, Retry: wait})
	if err := d.o.Sleep(ctx, wait); err != nil {
		return fmt.Errorf("draining Node %s: %w", d.name, err)
	}
	return nil
}

// blockedBy adds to blocks the budget that held pod back: the budgets of
// its namespace that select it (listed once a round), or, when they
// cannot be read or none matches, the API's own cause.
func blockedBy(ctx context.Context, api API, pod corev1.Pod, ae *kubeapi.APIError, budgets map[string][]policyv1.PodDisruptionBudget, blocks map[string]*Block) {
	add := func(key, detail string) {
		b, ok := blocks[key]
		if !ok {
			b = &Block{Budget: key, Detail: detail}
			blocks[key] = b
		}
		b.Pods = append(b.Pods, pod.Namespace+"/"+pod.Name)
	}
	pdbs, ok := budgets[pod.Namespace]
	if !ok {
		pdbs, _ = api.PodDisruptionBudgets(ctx, pod.Namespace) // unreadable: the API's cause says it
		budgets[pod.Namespace] = pdbs
	}
	matched := Budgets(pod, pdbs)
	if len(matched) == 0 {
		add("", apiCause(ae))
		return
	}
	for _, b := range matched {
		add(b.Namespace+"/"+b.Name, BudgetState(b))
	}
}

// apiCause is the API's reason for a 429: its DisruptionBudget cause when
// it gives one, else its message.
func apiCause(ae *kubeapi.APIError) string {
	for _, c := range ae.Causes {
		if c.Type == "DisruptionBudget" && c.Message != "" {
			return c.Message
		}
	}
	return ae.Message
}

func sortedBlocks(m map[string]*Block) []Block {
	out := make([]Block, 0, len(m))
	for _, b := range m {
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Budget < out[j].Budget })
	return out
}

func describe(bl []Block) string {
	s := make([]string, len(bl))
	for i, b := range bl {
		s[i] = b.String()
	}
	return strings.Join(s, "; ")
}

func refs(ds []Decision) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return out
}

// waitGone polls Node name's pods until none of want is bound to it any
// more (a pod of the same name with another UID is another pod).
func waitGone(ctx context.Context, api API, name string, want []Decision, deadline time.Time, o Options, progress func(left int)) error {
	for len(want) > 0 {
		pods, err := api.PodsOnNode(ctx, name)
		if err != nil {
			return fmt.Errorf("waiting for the evicted pods to leave Node %s: %w", name, err)
		}
		here := map[types.UID]bool{}
		for _, p := range pods {
			here[p.UID] = true
		}
		var still []Decision
		for _, d := range want {
			if here[d.UID] {
				still = append(still, d)
			}
		}
		want = still
		if len(want) == 0 {
			return nil
		}
		progress(len(want))
		left := deadline.Sub(o.Now())
		if left <= 0 {
			return fmt.Errorf("draining Node %s: %d evicted pods still there after %s (%s): their kubelet has not stopped them",
				name, len(want), o.Timeout, Name(refs(want)))
		}
		if err := o.Sleep(ctx, min(o.Poll, left)); err != nil {
			return fmt.Errorf("draining Node %s: %w", name, err)
		}
	}
	return nil
}

// Uncordon makes the Nodes the drains in rs cordoned schedulable again
// (for a caller that gives up: the host stays as it was, and so should
// its Nodes). It tries every one and returns the failures together.
func Uncordon(ctx context.Context, api API, rs []*Result) error {
	var errs []error
	for _, r := range rs {
		if r == nil || !r.Cordoned {
			continue
		}
		if err := api.SetUnschedulable(ctx, r.Node, false); err != nil {
			errs = append(errs, fmt.Errorf("uncordoning Node %s: %w", r.Node, err))
			continue
		}
		r.Cordoned = false
	}
	return errors.Join(errs...)
}
