package kubeapi

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// PodCache holds the pods bound to one Node, kept current by client-go's
// informer machinery (a reflector lists them by field selector
// spec.nodeName and watches from the list's resourceVersion, lists again
// when the watch breaks or its resourceVersion is gone, 410), so that
// reading a pod is a memory read: a slow or unreachable API server delays
// only the readers of pods the cache has not seen yet, never anyone else.
//
// The kubeconfig is loaded again at every list and watch: a kubelet's
// kubeconfig appears only after its TLS bootstrap, and its client
// certificate rotates.
type PodCache struct {
	kubeconfig string
	node       string
	opts       Options
	wait       time.Duration
	log        *slog.Logger
	informer   cache.SharedIndexInformer

	mu      sync.Mutex
	changed chan struct{} // closed (and replaced) at every change
	retry   chan struct{} // a reader's miss while failing: retry now
	backoff time.Duration // before the next retry of a failed list or watch
	status  CacheStatus
}

// CacheStatus is how current a PodCache is (for logs and metrics).
type CacheStatus struct {
	// Synced: the last list or watch worked; the cache is the API
	// server's (as of a watch event ago).
	Synced bool
	Pods   int
	// LastError is the last failure and ErrorSince when failures began;
	// both are cleared by the next success.
	LastError  string
	ErrorSince time.Time
	// LastHeard is the last list or watch event: a stopped API server
	// keeps its watch open and says nothing, so a miss reports how long
	// it has been silent.
	LastHeard time.Time
	// Lists, Errors: lists done (the first, re-lists after a broken watch
	// or 410 Gone) and
	// failed lists or watches. Waits, Timeouts: reads that waited for a
	// pod not yet in the cache, and those that gave up.
	Lists, Errors, Waits, Timeouts uint64
}

// Watch timing: the API server is asked to end each watch after
// watchTimeout (kube-apiserver picks 5–10 min for its own clients), and a
// list or watch that fails is retried after a backoff from minBackoff
// doubling to maxBackoff.
const (
	watchTimeout = 5 * time.Minute
	minBackoff   = 200 * time.Millisecond
	maxBackoff   = 30 * time.Second
)

// DefaultPodWait bounds how long Pod waits for a pod the cache does not
// hold yet. Short, because the wait is not the caller's alone: containerd
// hands an NRI plugin one event at a time, so while the first container
// of a pod placed as one unit waits, every other container event of the
// partition waits behind it (measured: BenchmarkContainerCreate's
// stalled-apiserver case). A pod reaches this watch about when it
// reaches kubelet, which then still creates its sandbox before the first
// container: a second covers a watch that lags; a longer wait would only
// stall the partition.
const DefaultPodWait = time.Second

// NewPodCache is a cache of the pods bound to Node node, read with the
// kubeconfig's credentials; wait bounds how long Pod waits for a pod the
// cache does not hold yet (0 = DefaultPodWait). Run fills it.
func NewPodCache(kubeconfig, node string, wait time.Duration, o Options, log *slog.Logger) *PodCache {
	if wait <= 0 {
		wait = DefaultPodWait
	}
	if log == nil {
		log = slog.Default()
	}
	c := &PodCache{kubeconfig: kubeconfig, node: node, opts: o, wait: wait, log: log.With("node", node),
		changed: make(chan struct{}), retry: make(chan struct{}, 1), backoff: minBackoff}
	c.informer = newPodInformer(c)
	return c
}

// Status is the cache's status now.
func (c *PodCache) Status() CacheStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.status
	st.Pods = len(c.informer.GetStore().ListKeys())
	return st
}

// Pod is the pod namespace/name from the cache, waiting for it (at most
// the cache's wait, and ctx) when the cache does not hold it yet: a pod
// just bound to the Node reaches the kubelet and this watch at about the
// same time. While the API server fails, a miss also cuts the cache's
// backoff short: an API server that answers again is listed at once,
// within this wait, rather than after up to maxBackoff. The pod is the
// caller's to change.
func (c *PodCache) Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	key := namespace + "/" + name
	var timer *time.Timer
	for {
		c.mu.Lock()
		changed, failing := c.changed, c.status.LastError != ""
		p := c.cached(key)
		if p == nil && timer == nil {
			c.status.Waits++
		}
		c.mu.Unlock()
		if p != nil {
			return p.DeepCopy(), nil
		}
		if failing {
			select {
			case c.retry <- struct{}{}:
			default: // a retry is asked for already
			}
		}
		if timer == nil {
			timer = time.NewTimer(c.wait)
			defer timer.Stop()
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, c.missing(key, ctx.Err())
		case <-timer.C:
			return nil, c.missing(key, fmt.Errorf("waited %s", c.wait))
		}
	}
}

// missing is the error of a pod the cache did not get in time, saying
// whether the API server is the reason.
func (c *PodCache) missing(key string, why error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status.Timeouts++
	if c.status.LastError != "" {
		return fmt.Errorf("pod %s is not in the pod cache of Node %s (%v): the API server has been failing since %s: %s",
			key, c.node, why, c.status.ErrorSince.Format(time.RFC3339), c.status.LastError)
	}
	if !c.status.Synced {
		return fmt.Errorf("pod %s is not in the pod cache of Node %s (%v): the first list of its pods has not been answered yet", key, c.node, why)
	}
	// The watch is open: either no such pod is bound to the Node, or the
	// API server has stalled without closing it (SIGSTOP, overload).
	return fmt.Errorf("pod %s is not in the pod cache of Node %s (%v): the API server has sent no such pod bound to the Node (its watch is open; last heard from it %s ago)",
		key, c.node, why, time.Since(c.status.LastHeard).Round(time.Millisecond))
}

// cached is the pod of key in the informer's store, nil when none.
func (c *PodCache) cached(key string) *corev1.Pod {
	obj, ok, err := c.informer.GetStore().GetByKey(key)
	if err != nil || !ok {
		return nil
	}
	p, _ := obj.(*corev1.Pod)
	return p
}

// Run keeps the cache current until ctx ends. client-go's own logs (the
// reflector's) go to the cache's logger.
func (c *PodCache) Run(ctx context.Context) {
	ctx = klog.NewContext(ctx, logr.FromSlogHandler(c.log.Handler()))
	c.informer.RunWithContext(ctx)
}

// succeeded records an answer of the API server: a list, or a watch event.
func (c *PodCache) succeeded(list bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if list {
		c.status.Lists++
	}
	if c.status.LastError != "" {
		c.log.Info("pod cache: the API server answers again", "failing since", c.status.ErrorSince)
	}
	c.status.Synced, c.status.LastError, c.status.ErrorSince, c.status.LastHeard = true, "", time.Time{}, time.Now()
	c.backoff = minBackoff
	close(c.changed)
	c.changed = make(chan struct{})
}

// failed records a failed list or watch and returns how long to back off.
func (c *PodCache) failed(err error) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.status.LastError == "" {
		c.status.ErrorSince = time.Now()
		c.log.Warn("pod cache: the API server fails; the first container of a pod placed as one unit (pod scope, VMs) that the cache does not hold waits for it, at most a second, then is refused (kubelet retries)", "err", err)
	} else {
		c.log.Debug("pod cache: the API server still fails", "err", err)
	}
	c.status.Synced, c.status.LastError = false, err.Error()
	c.status.Errors++
	// Waiters re-check and report the error when their time is up.
	close(c.changed)
	c.changed = make(chan struct{})
	d := c.backoff
	c.backoff = min(2*c.backoff, maxBackoff)
	return d
}
