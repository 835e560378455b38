package allocator

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

var errNotImplemented = errors.New("allocator: not implemented yet")

// Allocator is one partition's Memory Manager + Topology Manager.
type Allocator struct {
	cfg Config
}

// New validates cfg and returns an allocator with empty tables.
func New(cfg Config) (*Allocator, error) { return nil, errNotImplemented }

// Admit decides for one Pod.
func (a *Allocator) Admit(pod *corev1.Pod) (Decision, error) { return Decision{}, errNotImplemented }

// AdmitVMI computes the virt-launcher pod of a VMI manifest and admits it.
func (a *Allocator) AdmitVMI(manifest []byte) (Decision, error) {
	return Decision{}, errNotImplemented
}

// Release frees a pod's memory; false if the pod is unknown.
func (a *Allocator) Release(uid types.UID) (bool, error) { return false, errNotImplemented }

// Allocations returns the admitted pods sorted by UID.
func (a *Allocator) Allocations() []Allocation { return nil }

// State returns a deep copy of the state.
func (a *Allocator) State() State { return State{} }

// Restore rebuilds an allocator from a checkpointed State.
func Restore(cfg Config, st State) (*Allocator, []string, error) {
	return nil, nil, errNotImplemented
}
