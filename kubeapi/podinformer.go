package kubeapi

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// newPodInformer is the informer that fills c: its reflector lists and
// watches through c's list and watch (each with a client of the
// kubeconfig as it is then), its store keeps the pods slimmed, and every
// change tells c's readers.
func newPodInformer(c *PodCache) cache.SharedIndexInformer {
	lw := noWatchList{&cache.ListWatch{ListWithContextFunc: c.list, WatchFuncWithContext: c.watch}}
	inf := cache.NewSharedIndexInformerWithOptions(lw, &corev1.Pod{}, cache.SharedIndexInformerOptions{})
	// Neither can fail before the informer runs.
	_ = inf.SetTransform(slim)
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, _ *cache.Reflector, err error) {
		c.log.Debug("pod cache: list and watch ended, the reflector starts again", "err", err)
	})
	heard := func() { c.succeeded(false) }
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { heard() },
		UpdateFunc: func(any, any) { heard() },
		DeleteFunc: func(any) { heard() },
	})
	return inf
}

// noWatchList opts the reflector out of the streaming list (a watch with
// sendInitialEvents): the cache lists, and counts its lists, the same way
// on every API server, and a kubelet's few pods gain nothing from it.
type noWatchList struct{ *cache.ListWatch }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// list is the reflector's list of the Node's pods, one page of it.
func (c *PodCache) list(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	var l *corev1.PodList
	err := c.retrying(ctx, func(cl *Client) error {
		defer cl.Close()
		var err error
		l, err = cl.podPage(ctx, c.node, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	c.succeeded(l.Continue == "")
	return l, nil
}

// watch is the reflector's watch of the Node's pods. The watch ends a
// little after the time the reflector asks the API server for (a server or
// a network that goes silent would keep it open for ever), and closes its
// client when it stops.
func (c *PodCache) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	timeout := watchTimeout
	if opts.TimeoutSeconds != nil {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	var w watch.Interface
	err := c.retrying(ctx, func(cl *Client) error {
		wctx, cancel := context.WithTimeout(ctx, timeout+cl.timeout)
		inner, err := cl.watchPodsOnNode(wctx, c.node, opts)
		if err != nil {
			cancel()
			cl.Close()
			return err
		}
		w = &closingWatch{Interface: inner, stop: func() { cancel(); cl.Close() }}
		return nil
	})
	return w, err
}

// retrying calls try with a client of the kubeconfig as it is now until it
// works or ctx ends, while the API server does not answer (or the
// kubeconfig is not there yet, before the kubelet's TLS bootstrap): each
// failure is recorded, and the next try waits a backoff that a reader's
// miss cuts short, so that an API server that answers again is asked
// within a reader's wait. An answer of the API server that is an error
// (410 Gone, 403) is recorded and left to the reflector, which lists
// again.
func (c *PodCache) retrying(ctx context.Context, try func(*Client) error) error {
	for {
		err := c.try(try)
		if err == nil || ctx.Err() != nil {
			return err
		}
		wait := c.failed(err)
		var ke *KubeconfigError
		if !errors.Is(err, ErrUnreachable) && !errors.As(err, &ke) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		case <-c.retry:
		}
	}
}

// try loads the kubeconfig and calls f with a client of it (f closes it).
func (c *PodCache) try(f func(*Client) error) error {
	cfg, err := Load("/", c.kubeconfig)
	if err != nil {
		return err
	}
	return f(NewClient(cfg, c.opts))
}

// closingWatch is a watch that calls stop when it is stopped.
type closingWatch struct {
	watch.Interface
	stop func()
}

func (w *closingWatch) Stop() {
	w.Interface.Stop()
	w.stop()
}

// slim drops what no reader needs and is the bulk of a pod's size, before
// the informer stores it.
func slim(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		p.ManagedFields = nil
	}
	return obj, nil
}
