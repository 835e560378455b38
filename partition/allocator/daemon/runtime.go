package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/allocator"
)

// The runtime's side of the daemon: the NRI plugin (package nriplugin)
// admits, adopts and releases the containers its containerd creates
// through these, with the same decisions, checkpoint and metrics as the
// API's admissions.

// AdmitPod decides for a pod the runtime is about to start, with other
// providers' hints merged in. A repeated admission of the same pod
// returns the first decision. Its time counts in
// admission_duration_seconds as an API admission's does: in nri mode it
// is the time the allocator adds to a container's creation.
func (s *Server) AdmitPod(pod *corev1.Pod, extra allocator.Hints) (allocator.Decision, error) {
	start := time.Now()
	defer func() { s.metrics.latency.Observe(time.Since(start).Seconds()) }()
	m, err := podManifest(pod)
	if err != nil {
		return allocator.Decision{}, err
	}
	m.Hints = extra
	resp, _, err := s.admit(m)
	return resp.Decision, err
}

// EvaluatePod is the decision AdmitPod would make now, without making
// it: nothing is kept and nothing is written (kubelet mode compares
// kubelet's placement with it, then records kubelet's). A pod that
// holds an allocation already is an error: its decision is made.
func (s *Server) EvaluatePod(pod *corev1.Pod, extra allocator.Hints) (allocator.Decision, error) {
	if pod == nil || pod.UID == "" {
		return allocator.Decision{}, errors.New("pod without a uid")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return allocator.Decision{}, s.broken
	}
	if _, known := s.digests[pod.UID]; known {
		return allocator.Decision{}, fmt.Errorf("pod %s/%s (uid %s) is admitted already: nothing to evaluate", pod.Namespace, pod.Name, pod.UID)
	}
	d, err := s.alloc.AdmitWithHints(pod, extra)
	if err != nil || !d.Admitted {
		return d, err // a rejection keeps nothing
	}
	// The Memory Manager's removal is the exact inverse of its
	// allocation (kubelet relies on it too): the state is as it was.
	if _, err := s.alloc.Release(pod.UID); err != nil {
		return d, fmt.Errorf("undoing the evaluation of %s: %w", pod.UID, err)
	}
	return d, nil
}

// AdoptPod records a pod that already runs, each container on the nodes
// given (allocator.Adopt).
func (s *Server) AdoptPod(pod *corev1.Pod, placed map[string]bitmask.NodeSet) (allocator.Decision, error) {
	m, err := podManifest(pod)
	if err != nil {
		return allocator.Decision{}, err
	}
	m.Placed = placed
	if m.Placed == nil {
		m.Placed = map[string]bitmask.NodeSet{}
	}
	resp, _, err := s.admit(m)
	return resp.Decision, err
}

// ReleasePod frees a pod; false when it had no allocation.
func (s *Server) ReleasePod(uid types.UID) (bool, error) {
	_, status, err := s.release(uid)
	if status == http.StatusNotFound {
		return false, nil
	}
	return err == nil, err
}

// Allocations are the decided allocations, durable or on their way.
func (s *Server) Allocations() []allocator.Allocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.alloc.Allocations()
}

// podManifest is the Manifest of a pod built in code: its digest is over
// its JSON, so the same pod admitted twice is one admission.
func podManifest(pod *corev1.Pod) (Manifest, error) {
	if pod == nil || pod.UID == "" {
		return Manifest{}, errors.New("pod without a uid")
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		return Manifest{}, fmt.Errorf("encoding pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return Manifest{Kind: KindPod, UID: pod.UID, Name: pod.Namespace + "/" + pod.Name, Pod: pod, JSON: raw, Digest: manifestDigest(raw)}, nil
}
