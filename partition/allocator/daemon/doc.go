// Package daemon is the per-partition allocator daemon: the
// partition/allocator state machine behind a versioned HTTP/JSON API on a
// Unix socket, with a crash-safe checkpoint, SO_PEERCRED checks, sd_notify
// readiness/watchdog and Prometheus metrics. The API's paths and bodies
// and the Client that callers use are in partition/allocator/daemonapi,
// which a caller links without this server.
//
// Layout: manifest.go (strict Pod/VMI decoding with field paths),
// checkpoint.go (checksummed atomic state file and the journal of the
// states since), peercred.go (who may talk to us), metrics.go, server.go
// (the handlers and the one mutex that serialises decisions), daemon.go
// (socket, systemd, lifecycle).
//
// The contract that matters for crash safety: a decision that changes the
// state is written to the journal before the response is sent, so every
// acknowledged operation survives a SIGKILL; the record is fdatasync'd
// right after, before the next one is written, so a crash of the OS
// leaves a journal the next start reads (see journal.sync for why the
// answer does not wait for the disk); and admissions are idempotent by
// pod UID, so a client that lost its connection mid-request retries and
// gets the decision that was made. Durable is one write per decision
// (fewer when concurrent decisions share it): an append of the change
// (a delta of the pods and nodes it touched) to the journal, compacted
// into the checkpoint (temp file, fsync, rename, fsync dir) every 1,024
// records, at a run's first write and at a clean stop.
package daemon
