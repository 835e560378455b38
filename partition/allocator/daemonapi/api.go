// Package daemonapi is the allocator daemon's wire API: its paths, the
// request and response bodies, the error body, and the Client that speaks
// them over the daemon's Unix socket. It is apart from
// partition/allocator/daemon so that a package that only talks to a daemon
// (slices/apply's status probe) links an HTTP client and these types, not
// the server, its checkpoint and its Prometheus metrics;
// internal/importrules holds it to that.
package daemonapi

import (
	"github.com/numa-partition/numa-partition/partition/allocator"
)

// API paths. The version prefix changes only with incompatible changes.
const (
	PathAdmit       = "/v1/admit"
	PathRelease     = "/v1/release/" // + pod UID
	PathAllocations = "/v1/allocations"
	PathState       = "/v1/state"
	PathHealth      = "/v1/healthz"
	PathMetrics     = "/metrics"
)

// ErrorResponse is the body of every non-2xx response. Field is the JSON
// path of the offending manifest field when there is one
// ("spec.containers[0].resources.limits.memory").
type ErrorResponse struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

// AdmitResponse is the answer to POST /v1/admit. A rejection (kubelet's
// TopologyAffinityError) is a 200 with Decision.Admitted=false: the request
// was fine, the pod does not fit.
type AdmitResponse struct {
	Partition string `json:"partition"`
	// Kind is what the manifest was: Pod or VirtualMachineInstance.
	Kind     string             `json:"kind"`
	Decision allocator.Decision `json:"decision"`
	// Generation is the state generation after this operation: it grows by
	// one with every operation that changed the state (an admission that
	// was admitted, a release). A rejection or a repeated admission reports
	// the current generation. Ordering acknowledged operations by
	// generation replays the daemon's history exactly.
	Generation uint64 `json:"generation"`
	// Repeated is true when the pod UID was already admitted with the same
	// manifest (a client retry): the stored decision is returned and
	// nothing changes.
	Repeated bool `json:"repeated,omitempty"`
}

// ReleaseResponse is the answer to POST /v1/release/{uid}.
type ReleaseResponse struct {
	Partition  string `json:"partition"`
	PodUID     string `json:"podUID"`
	Released   bool   `json:"released"`
	Generation uint64 `json:"generation"`
}

// AllocationsResponse is the answer to GET /v1/allocations.
type AllocationsResponse struct {
	Partition   string                 `json:"partition"`
	Generation  uint64                 `json:"generation"`
	Allocations []allocator.Allocation `json:"allocations"`
}

// StateResponse is the answer to GET /v1/state: the Memory Manager tables
// (per node and resource: total, systemReserved, allocatable, reserved,
// free) and the allocations.
type StateResponse struct {
	Partition  string          `json:"partition"`
	Generation uint64          `json:"generation"`
	State      allocator.State `json:"state"`
}

// HealthResponse is the answer to GET /v1/healthz.
type HealthResponse struct {
	Status      string   `json:"status"` // "ok"
	Partition   string   `json:"partition"`
	Version     string   `json:"version,omitempty"`
	Generation  uint64   `json:"generation"`
	Allocations int      `json:"allocations"`
	Uptime      float64  `json:"uptimeSeconds"`
	Drift       []string `json:"drift,omitempty"` // memory drift found at start
	// Labels are the partition's node labels: `admit` without --partition
	// matches a pod's nodeSelector against them.
	Labels     map[string]string `json:"labels,omitempty"`
	Checkpoint string            `json:"checkpoint"`
}
