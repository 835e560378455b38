package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
)

// Server holds one partition's allocator and serves the API.
//
// Decisions are serialised under mu (the allocator is not safe for
// concurrent use), which makes the history a sequence numbered by
// generation. Durability is a group commit: a decided change waits until a
// checkpoint with its generation is on disk; whichever waiter finds no
// write in progress writes the latest state for everyone decided so far,
// outside the lock, so concurrent clients share one write instead of
// queueing for one each. No answer leaves before its state is durable
// against the daemon's crash. A write is one append to the journal of
// what changed (the pods in changed), fdatasync'd after the answer and
// before the next write, compacted into the checkpoint now and then (see
// journal).
type Server struct {
	partition string
	cfg       allocator.Config
	stateDir  string
	version   string
	maxBody   int64
	timeout   time.Duration // per request
	log       *slog.Logger
	started   time.Time
	drift     []string
	labels    map[string]string
	metrics   *metrics
	// onChange is told a one-line summary after each committed change
	// (systemd STATUS=).
	onChange func(summary string)

	mu   sync.Mutex
	cond *sync.Cond // on mu: durable advanced or a write failed
	// alloc is the decided state, generation head, with digests of its
	// admitted manifests. durable is what the checkpoint file holds:
	// generation ≤ head, never mutated once set (readers use it unlocked).
	alloc   *allocator.Allocator
	head    uint64
	digests map[types.UID]string
	// changed are the pods admitted or released since the state being
	// written (or the durable one): what the next journal record holds.
	changed map[types.UID]bool
	durable *Checkpoint
	// journal writes durable states; used by the one writer (writing).
	journal *journal
	// published is durable and broken as readers see them without the
	// mutex: health, allocations and state answer while a decision runs.
	published atomic.Pointer[published]
	writing   bool
	// A failed write rolls alloc back to durable: every change decided in
	// that epoch above rolledBackAbove[epoch] fails and is not answered.
	epoch           uint64
	rolledBackAbove map[uint64]uint64
	writeErr        error
	// broken is set when a failed checkpoint write could not be rolled
	// back in memory: the daemon then refuses everything and fails its
	// health check, so systemd restarts it from the (intact) checkpoint.
	broken error
}

// ServerOptions configure NewServer.
type ServerOptions struct {
	Partition string
	Config    allocator.Config
	StateDir  string // holds allocations.json and the lock
	// Version and Commit are the binary's (numa_partition_build_info).
	Version, Commit string
	MaxRequestBytes int64 // 0 = DefaultMaxRequestBytes
	// RequestTimeout bounds one API request; 0 = DefaultRequestTimeout.
	RequestTimeout time.Duration
	Logger         *slog.Logger
	OnChange       func(summary string)
	Labels         map[string]string
	// SyncBeforeAnswer: a journal append is answered once fdatasync'd,
	// not once written (Options.SyncBeforeAnswer).
	SyncBeforeAnswer bool
}

// RecoveryHint is the documented way out of a checkpoint the daemon refuses.
func RecoveryHint(partition, stateDir string) string {
	return fmt.Sprintf("to start over with no allocations (running pods keep their memory but the allocator forgets it; drain the partition's node first), run: numa-partition allocator reset-state --partition %s --state-dir %s (the old file is kept beside it); see docs/allocator-daemon.md", partition, stateDir)
}

// NewServer restores the partition's state from its checkpoint (or starts
// empty when there is none). It refuses a corrupted checkpoint, one of
// another partition, and one whose assignments no longer fit the memory
// that cfg describes; drift that still fits is logged and kept.
func NewServer(opts ServerOptions) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	s := &Server{
		partition: opts.Partition,
		cfg:       opts.Config,
		stateDir:  opts.StateDir,
		version:   opts.Version,
		maxBody:   opts.MaxRequestBytes,
		timeout:   opts.RequestTimeout,
		log:       opts.Logger,
		started:   time.Now(),
		metrics:   newMetrics(opts.Partition, opts.Version, opts.Commit),
		onChange:  opts.OnChange,
		labels:    opts.Labels,

		rolledBackAbove: map[uint64]uint64{},
		changed:         map[types.UID]bool{},
		journal:         newJournal(opts.StateDir, opts.SyncBeforeAnswer),
	}
	s.cond = sync.NewCond(&s.mu)
	if err := RemoveStaleTemps(opts.StateDir); err != nil {
		return nil, err
	}
	cp, err := ReadCheckpoint(opts.StateDir)
	if err != nil {
		var corrupt *CorruptError
		if errors.As(err, &corrupt) {
			return nil, fmt.Errorf("%w; refusing to start rather than forget allocations. %s", err, RecoveryHint(opts.Partition, opts.StateDir))
		}
		return nil, err
	}
	if cp == nil {
		a, err := allocator.New(opts.Config)
		if err != nil {
			return nil, fmt.Errorf("allocator config: %w", err)
		}
		s.alloc = a
		s.durable = &Checkpoint{Partition: opts.Partition, State: a.State(), Digests: map[types.UID]string{}}
		s.log.Info("no checkpoint, starting with no allocations", "checkpoint", s.checkpointPath())
	} else {
		if cp.Partition != opts.Partition {
			return nil, fmt.Errorf("checkpoint %s belongs to partition %q, not %q: wrong --state-dir?", s.checkpointPath(), cp.Partition, opts.Partition)
		}
		a, drift, err := allocator.Restore(opts.Config, cp.State)
		if err != nil {
			return nil, fmt.Errorf("restoring %d allocations from %s: %w; refusing to start: the node's memory no longer holds what was promised. Release pods or fix the memory configuration; %s",
				len(cp.State.Allocations), s.checkpointPath(), err, RecoveryHint(opts.Partition, opts.StateDir))
		}
		for _, d := range drift {
			s.log.Warn("memory drift since the checkpoint was written; assignments still fit and are kept", "drift", d)
		}
		s.alloc, s.drift = a, drift
		s.metrics.drift.Store(int64(len(drift)))
		// Keep the restored tables (new totals) as the durable state at the
		// next write; until then the file still holds the old totals, which
		// Restore maps the same way again.
		s.durable = &Checkpoint{Partition: cp.Partition, Generation: cp.Generation, State: a.State(), Digests: cp.Digests}
		s.log.Info("restored checkpoint", "checkpoint", s.checkpointPath(), "allocations", len(cp.State.Allocations), "generation", cp.Generation)
	}
	s.head, s.digests = s.durable.Generation, maps.Clone(s.durable.Digests)
	s.publish()
	s.metrics.setState(s.durable.Generation, s.durable.State)
	return s, nil
}

func (s *Server) checkpointPath() string { return s.stateDir + "/" + CheckpointName }

// Summary is a one-line state description for systemd's STATUS=.
func (s *Server) Summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.summaryLocked()
}

func (s *Server) summaryLocked() string {
	var free uint64
	for _, n := range s.durable.State.Machine {
		free += n.MemoryMap[allocator.ResourceMemory].Free
	}
	return fmt.Sprintf("serving %d allocations, %d MiB memory free, generation %d", len(s.durable.State.Allocations), free>>20, s.durable.Generation)
}

// Healthy reports whether the daemon can take its lock within timeout and
// is not broken: what the systemd watchdog ping is conditioned on.
func (s *Server) Healthy(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for !s.mu.TryLock() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	defer s.mu.Unlock()
	return s.broken == nil
}

// Handler serves the API. Peer credentials are enforced when the
// connection went through the PeerPolicy's ConnContext; connections
// without a verdict (the optional TCP metrics listener uses MetricsHandler
// instead) are refused.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(daemonapi.PathAdmit, only(http.MethodPost, s.handleAdmit))
	mux.Handle(daemonapi.PathRelease+"{uid}", only(http.MethodPost, s.handleRelease))
	mux.Handle(daemonapi.PathAllocations, only(http.MethodGet, s.handleAllocations))
	mux.Handle(daemonapi.PathState, only(http.MethodGet, s.handleState))
	mux.Handle(daemonapi.PathHealth, only(http.MethodGet, s.handleHealth))
	mux.Handle(daemonapi.PathMetrics, s.MetricsHandler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, &FieldError{Msg: fmt.Sprintf("no endpoint %s; the API is %s, %s{uid}, %s, %s, %s, %s",
			r.URL.Path, daemonapi.PathAdmit, daemonapi.PathRelease, daemonapi.PathAllocations, daemonapi.PathState, daemonapi.PathHealth, daemonapi.PathMetrics)})
	})
	// The request timeout the documentation promises: ReadTimeout and
	// WriteTimeout bound the connection, not the decision.
	return http.TimeoutHandler(s.requirePeer(mux), s.timeout,
		fmt.Sprintf(`{"error":"the request took longer than %s; an admission that was decided is kept: retry it, admissions are idempotent by pod UID"}`, s.timeout))
}

// DefaultMaxRequestBytes bounds a request body. A Pod manifest with a
// hundred containers is well under 256 KiB; anything much larger is a
// mistake or an attack on a root daemon.
const DefaultMaxRequestBytes = 1 << 20

// DefaultRequestTimeout bounds one API request (docs/allocator-daemon.md).
const DefaultRequestTimeout = 30 * time.Second

// MetricsHandler serves /metrics alone (for the optional TCP address).
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{})
}

func (s *Server) requirePeer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peer, ok := peerFrom(r.Context())
		switch {
		case !ok:
			s.metrics.errors.WithLabelValues("peer").Inc()
			writeError(w, http.StatusForbidden, &FieldError{Msg: "peer credentials unknown: the API is served on its Unix socket only"})
			return
		case peer.err != nil:
			s.metrics.peersDenied.Inc()
			s.log.Warn("refused API request from a process that is not allowed", "path", r.URL.Path, "pid", peer.cred.PID, "uid", peer.cred.UID, "gid", peer.cred.GID, "reason", peer.err)
			writeError(w, http.StatusForbidden, &FieldError{Msg: "permission denied: " + peer.err.Error()})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func only(method string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			writeError(w, http.StatusMethodNotAllowed, &FieldError{Msg: fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, method)})
			return
		}
		h(w, r)
	})
}

// readBody reads a size-limited body; it has answered the request when it
// returns an error.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.ContentLength > s.maxBody {
		writeError(w, http.StatusRequestEntityTooLarge, &FieldError{Msg: fmt.Sprintf("request body of %d bytes is larger than the limit of %d bytes", r.ContentLength, s.maxBody)})
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, &FieldError{Msg: fmt.Sprintf("request body is larger than the limit of %d bytes", s.maxBody)})
			return nil, false
		}
		writeError(w, http.StatusBadRequest, &FieldError{Msg: fmt.Sprintf("reading request body: %v", err)})
		return nil, false
	}
	return body, true
}

func (s *Server) handleAdmit(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	defer func() { s.metrics.latency.Observe(time.Since(start).Seconds()) }()
	body, ok := s.readBody(w, r)
	if !ok {
		s.metrics.admissions.WithLabelValues(resultInvalid).Inc()
		return
	}
	m, err := DecodeManifest(body)
	if err != nil {
		s.metrics.admissions.WithLabelValues(resultInvalid).Inc()
		writeError(w, http.StatusBadRequest, err)
		return
	}
	resp, status, err := s.admit(m)
	if err != nil {
		writeError(w, status, err)
		return
	}
	writeJSONResponse(w, http.StatusOK, resp)
}

// admit decides, waits until the decision is durable, and only then
// returns. The returned status is the HTTP status for err.
func (s *Server) admit(m Manifest) (daemonapi.AdmitResponse, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		s.metrics.admissions.WithLabelValues(resultError).Inc()
		return daemonapi.AdmitResponse{}, http.StatusServiceUnavailable, s.broken
	}
	resp := daemonapi.AdmitResponse{Partition: s.partition, Kind: m.Kind}
	epoch := s.epoch
	if digest, known := s.digests[m.UID]; known {
		if digest != m.Digest {
			s.metrics.admissions.WithLabelValues(resultInvalid).Inc()
			return resp, http.StatusConflict, &FieldError{Field: "metadata.uid", Msg: fmt.Sprintf("pod UID %s is already admitted with a different manifest; release it first", m.UID)}
		}
		for _, a := range s.alloc.Allocations() {
			if a.PodUID == m.UID {
				resp.Decision, resp.Repeated, resp.Generation = a, true, s.head
				// The first admission may still be on its way to disk.
				if err := s.waitDurable(s.head, epoch); err != nil {
					s.metrics.admissions.WithLabelValues(resultError).Inc()
					return resp, http.StatusInternalServerError, err
				}
				s.metrics.admissions.WithLabelValues(resultRepeated).Inc()
				return resp, 0, nil
			}
		}
	}
	if err := s.generationLeft(); err != nil {
		s.metrics.admissions.WithLabelValues(resultError).Inc()
		return resp, http.StatusServiceUnavailable, err
	}
	var d allocator.Decision
	var err error
	switch {
	case m.Kind == KindVMI:
		d, err = s.alloc.AdmitVMIWithHints(m.JSON, m.Hints)
	case m.Placed != nil:
		d, err = s.alloc.Adopt(m.Pod, m.Placed)
	default:
		d, err = s.alloc.AdmitWithHints(m.Pod, m.Hints)
	}
	if err != nil {
		s.metrics.admissions.WithLabelValues(resultInvalid).Inc()
		s.metrics.errors.WithLabelValues("admit").Inc()
		return resp, http.StatusBadRequest, asFieldError(err)
	}
	resp.Decision = d
	if d.Admitted {
		// Every admitted pod, pinned or not, is kept in the state.
		s.head++
		s.digests[m.UID] = m.Digest
		s.changed[m.UID] = true
	}
	resp.Generation = s.head
	// A rejection waits too: it was decided against changes that must be
	// durable before anyone is told about their consequences.
	if err := s.waitDurable(resp.Generation, epoch); err != nil {
		s.metrics.admissions.WithLabelValues(resultError).Inc()
		return resp, http.StatusInternalServerError, err
	}
	if !d.Admitted {
		s.metrics.admissions.WithLabelValues(resultRejected).Inc()
		s.metrics.rejections.WithLabelValues(rejectionReason(d.Reason)).Inc()
		s.log.Info("pod rejected", "pod", d.Pod, "uid", d.PodUID, "reason", d.Reason)
		return resp, 0, nil
	}
	s.metrics.admissions.WithLabelValues(resultAdmitted).Inc()
	s.log.Debug("pod admitted", "pod", d.Pod, "uid", d.PodUID, "pinned", d.Pinned, "generation", resp.Generation)
	return resp, 0, nil
}

// maxGeneration is the last generation a change may take. The counter
// never wraps: a wrapped generation (0) is below the checkpoint's, so
// waitDurable would take the change for already on disk and answer it
// unwritten, and the next start would restore the state without it.
const maxGeneration = math.MaxUint64

// generationLeft refuses a change when the generation is at its maximum
// (2^64 changes are out of reach; a hand-edited checkpoint is not).
// Called with mu held, before anything is decided.
func (s *Server) generationLeft() error {
	if s.head < maxGeneration {
		return nil
	}
	return fmt.Errorf("the state is at generation %d, the counter's maximum: no further admission or release can be numbered (a checkpoint edited by hand?); %s",
		s.head, RecoveryHint(s.partition, s.stateDir))
}

// waitDurable returns once generation gen, decided in epoch, is on disk,
// writing the checkpoint itself when no write is in progress. It returns an
// error when the write failed and gen was rolled back. Called with mu held;
// mu is released while waiting and while writing.
func (s *Server) waitDurable(gen, epoch uint64) error {
	for {
		if s.epoch != epoch {
			if gen <= s.rolledBackAbove[epoch] {
				return nil // durable before the failed write
			}
			return fmt.Errorf("operation not done: %w", s.writeErr)
		}
		if s.durable.Generation >= gen {
			return nil
		}
		if s.broken != nil {
			return s.broken
		}
		if s.writing {
			s.cond.Wait()
			continue
		}
		s.writeHead()
	}
}

// Compact writes the durable state as the checkpoint and empties the
// journal, once no write is in progress and every decided change is
// durable (else it leaves them to their writer): what a clean stop does,
// so that the state is whole in the checkpoint, as a build that reads no
// deltas expects after a downgrade.
func (s *Server) Compact() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.writing {
		s.cond.Wait()
	}
	if s.broken != nil || s.head != s.durable.Generation || s.journal.records == 0 {
		return nil
	}
	return s.journal.compact(s.durable)
}

// writeHead writes the decided state as the next checkpoint. On failure it
// puts the allocator back to the durable state, so memory and disk never
// disagree, and starts a new epoch: the changes above durable fail. A
// journal append is answered once written, and synced before the next
// write (journal.sync) by a goroutine of its own, so that the writer's
// own change is answered before the sync too.
func (s *Server) writeHead() {
	// s.changed are the pods changed since durable (a failed write rolls
	// back to it and empties them).
	cp := &Checkpoint{Partition: s.partition, Generation: s.head, State: s.alloc.StateAfter(s.durable.State, s.changed), Digests: maps.Clone(s.digests)}
	changed := s.changed
	s.changed = map[types.UID]bool{}
	s.writing = true
	s.mu.Unlock()
	start := time.Now()
	s.metrics.writeBegan(start)
	synced, err := s.journal.write(cp, changed)
	s.mu.Lock()
	defer s.cond.Broadcast()
	if err != nil {
		s.writeDone(start, false)
		s.undo(err)
		return
	}
	s.durable = cp
	s.publish()
	s.metrics.setState(cp.Generation, cp.State)
	if s.onChange != nil {
		s.onChange(s.summaryLocked())
	}
	if synced {
		s.writeDone(start, true)
		return
	}
	// Answered now (this writer's own change too); the next write waits
	// until the sync is done.
	go func() {
		ok := s.syncJournal(cp)
		s.mu.Lock()
		s.writeDone(start, ok)
		s.cond.Broadcast()
		s.mu.Unlock()
	}()
}

// writeDone ends the write begun at start, its sync included: the next
// may begin. ok says whether it made the state durable. Called with mu
// held.
func (s *Server) writeDone(start time.Time, ok bool) {
	s.writing = false
	s.metrics.checkpoint.Observe(time.Since(start).Seconds())
	s.metrics.writeEnded(ok)
}

// syncJournal syncs the append of cp. When the fdatasync fails, cp is
// written whole as the checkpoint; when that fails too, the acknowledged
// changes may not survive a crash of the OS, and the daemon stops
// deciding (broken) until it is restarted from what is on the disk.
// Called without mu, while writing is set. It reports whether cp is
// durable, synced or compacted.
func (s *Server) syncJournal(cp *Checkpoint) bool {
	err := s.journal.sync()
	if err == nil {
		return true
	}
	s.metrics.errors.WithLabelValues("sync").Inc()
	s.log.Error("journal sync failed; writing the state whole as the checkpoint", "err", err, "generation", cp.Generation)
	if cerr := s.journal.compact(cp); cerr != nil {
		s.mu.Lock()
		s.broken = fmt.Errorf("the journal's fdatasync failed (%v) and so did writing the checkpoint (%v): the changes up to generation %d are answered but may not survive a crash of the OS; restart the daemon", err, cerr, cp.Generation)
		s.publish()
		s.log.Error("daemon unusable until restarted", "err", s.broken)
		s.mu.Unlock()
		return false
	}
	return true
}

// undo puts the allocator back to the durable state after a failed write
// and starts a new epoch. Called with mu held.
func (s *Server) undo(err error) {
	s.metrics.errors.WithLabelValues("checkpoint").Inc()
	s.log.Error("checkpoint write failed, undoing the operations not yet written", "err", err, "durable", s.durable.Generation, "undone", s.head-s.durable.Generation)
	s.writeErr = err
	s.rolledBackAbove[s.epoch] = s.durable.Generation
	s.epoch++
	restored, _, rerr := allocator.Restore(s.cfg, s.durable.State)
	if rerr != nil {
		s.broken = fmt.Errorf("checkpoint write failed (%v) and the in-memory state could not be rolled back (%v): restart the daemon", err, rerr)
		s.publish()
		s.log.Error("daemon unusable until restarted", "err", s.broken)
		return
	}
	// What was decided since durable is undone, written or not.
	s.alloc, s.head, s.digests, s.changed = restored, s.durable.Generation, maps.Clone(s.durable.Digests), map[types.UID]bool{}
}

func (s *Server) handleRelease(w http.ResponseWriter, r *http.Request) {
	uid := types.UID(r.PathValue("uid"))
	if strings.TrimSpace(string(uid)) == "" {
		writeError(w, http.StatusBadRequest, &FieldError{Field: "uid", Msg: "empty pod UID"})
		return
	}
	if msg := UIDProblem(uid); msg != "" {
		writeError(w, http.StatusBadRequest, &FieldError{Field: "uid", Msg: fmt.Sprintf("%q %s", uid, msg)})
		return
	}
	resp, status, err := s.release(uid)
	if err != nil {
		writeError(w, status, err)
		return
	}
	writeJSONResponse(w, http.StatusOK, resp)
}

func (s *Server) release(uid types.UID) (daemonapi.ReleaseResponse, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		s.metrics.releases.WithLabelValues("error").Inc()
		return daemonapi.ReleaseResponse{}, http.StatusServiceUnavailable, s.broken
	}
	resp := daemonapi.ReleaseResponse{Partition: s.partition, PodUID: string(uid)}
	epoch := s.epoch
	if err := s.generationLeft(); err != nil {
		s.metrics.releases.WithLabelValues("error").Inc()
		return resp, http.StatusServiceUnavailable, err
	}
	released, err := s.alloc.Release(uid)
	if err != nil {
		s.metrics.releases.WithLabelValues("error").Inc()
		s.metrics.errors.WithLabelValues("release").Inc()
		return resp, http.StatusBadRequest, asFieldError(err)
	}
	if !released {
		// "Not found" may be the consequence of a release still on its way
		// to disk: answer only once that is durable.
		if err := s.waitDurable(s.head, epoch); err != nil {
			s.metrics.releases.WithLabelValues("error").Inc()
			return resp, http.StatusInternalServerError, err
		}
		s.metrics.releases.WithLabelValues("unknown").Inc()
		return resp, http.StatusNotFound, &FieldError{Field: "uid", Msg: fmt.Sprintf("pod UID %s has no allocation in partition %s", uid, s.partition)}
	}
	s.head++
	delete(s.digests, uid)
	s.changed[uid] = true
	resp.Generation = s.head
	if err := s.waitDurable(resp.Generation, epoch); err != nil {
		s.metrics.releases.WithLabelValues("error").Inc()
		return resp, http.StatusInternalServerError, err
	}
	s.metrics.releases.WithLabelValues("released").Inc()
	resp.Released = true
	s.log.Debug("pod released", "uid", uid, "generation", resp.Generation)
	return resp, 0, nil
}

// durableSnapshot returns the committed checkpoint. It is never mutated
// after commit (each commit builds a new one), so it may be encoded
// outside the lock.
func (s *Server) durableSnapshot() (*Checkpoint, error) {
	p := s.published.Load()
	return p.durable, p.broken
}

// published is what durableSnapshot returns.
type published struct {
	durable *Checkpoint
	broken  error
}

// publish makes durable and broken visible to readers; called with mu
// held whenever either changes.
func (s *Server) publish() {
	s.published.Store(&published{durable: s.durable, broken: s.broken})
	s.metrics.broken.Store(s.broken != nil)
}

func (s *Server) handleAllocations(w http.ResponseWriter, r *http.Request) {
	cp, _ := s.durableSnapshot()
	allocs := cp.State.Allocations
	if allocs == nil {
		allocs = []allocator.Allocation{}
	}
	writeJSONResponse(w, http.StatusOK, daemonapi.AllocationsResponse{Partition: s.partition, Generation: cp.Generation, Allocations: allocs})
}

func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	cp, _ := s.durableSnapshot()
	writeJSONResponse(w, http.StatusOK, daemonapi.StateResponse{Partition: s.partition, Generation: cp.Generation, State: cp.State})
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	cp, broken := s.durableSnapshot()
	h := daemonapi.HealthResponse{Status: "ok", Partition: s.partition, Version: s.version, Generation: cp.Generation,
		Allocations: len(cp.State.Allocations), Uptime: time.Since(s.started).Seconds(), Drift: s.drift, Labels: s.labels, Checkpoint: s.checkpointPath()}
	if broken != nil {
		h.Status = "broken: " + broken.Error()
		writeJSONResponse(w, http.StatusServiceUnavailable, h)
		return
	}
	writeJSONResponse(w, http.StatusOK, h)
}

// fieldPather is how errors from other packages (the allocator,
// sigs.k8s.io/json) name a field.
type fieldPather interface{ FieldPath() string }

func asFieldError(err error) *FieldError {
	var fe *FieldError
	if errors.As(err, &fe) {
		return fe
	}
	var pe *allocator.PodError
	if errors.As(err, &pe) {
		return &FieldError{Field: pe.Field, Msg: pe.Msg}
	}
	var fp fieldPather
	if errors.As(err, &fp) {
		return &FieldError{Field: fp.FieldPath(), Msg: err.Error()}
	}
	return &FieldError{Msg: err.Error()}
}

func writeError(w http.ResponseWriter, status int, err error) {
	fe := asFieldError(err)
	msg := fe.Msg
	if msg == "" {
		msg = err.Error()
	}
	writeJSONResponse(w, status, daemonapi.ErrorResponse{Error: msg, Field: fe.Field})
}

func writeJSONResponse(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":"encoding response failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
