package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
)

// TestCrashRecovery kills the daemon with SIGKILL at random moments of a
// stream of admissions and releases, 50 times. After each restart the state
// must be exactly the replay of the acknowledged operations: none lost. The
// one request in flight at the kill may or may not have been committed (the
// daemon cannot know whether the answer arrived); the client retries it, as
// any client must, and the retry is answered from the checkpoint
// (idempotent by UID) or executed; after that the state must equal the
// acknowledged history exactly, so nothing unacknowledged ("phantom") is
// left either.
func TestCrashRecovery(t *testing.T) {
	kills := 50
	if testing.Short() {
		kills = 10
	}
	dir := t.TempDir()
	cfg := testConfig()
	spec := daemonSpec{dir: dir, config: writeConfig(t, dir, cfg)}
	r := rand.New(rand.NewPCG(42, 42))

	var history []op
	var live []string // admitted pods, per the acknowledged history
	nextUID := 0
	committedInFlight, lostInFlight := 0, 0
	seenCommitted := 0 // restarts whose state held the in-flight request

	// next picks the stream's next operation.
	next := func() (admit *podSpec, release string) {
		if len(live) > 0 && r.IntN(5) < 2 {
			return nil, live[r.IntN(len(live))]
		}
		nextUID++
		p := randomPod(r, fmt.Sprintf("crash-%05d", nextUID))
		return &p, ""
	}
	// do runs one operation; it returns false when the daemon did not answer.
	do := func(d *process, admit *podSpec, release string) (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if admit != nil {
			resp, err := d.Client.Admit(ctx, admit.yaml(t))
			if err != nil {
				var apiErr *daemonapi.APIError
				if errors.As(err, &apiErr) {
					return false, err
				}
				return false, nil
			}
			// A repeated answer is the decision committed before the kill;
			// in this single stream its generation is the current one.
			history = append(history, op{admit: admit, decision: resp.Decision, generation: resp.Generation, changed: resp.Decision.Admitted})
			if resp.Repeated {
				committedInFlight++
			}
			if resp.Decision.Admitted {
				live = append(live, admit.uid)
			}
			return true, nil
		}
		resp, err := d.Client.Release(ctx, release)
		var apiErr *daemonapi.APIError
		switch {
		case errors.As(err, &apiErr) && apiErr.Status == 404:
			// A retried release that was committed before the kill.
			committedInFlight++
			history = append(history, op{release: release, generation: uint64(countChanges(history)) + 1, changed: true})
		case errors.As(err, &apiErr):
			return false, err
		case err != nil:
			return false, nil
		default:
			history = append(history, op{release: release, generation: resp.Generation, changed: true})
		}
		for i, uid := range live {
			if uid == release {
				live = append(live[:i], live[i+1:]...)
				break
			}
		}
		return true, nil
	}

	for kill := range kills {
		d := startDaemon(t, spec)
		if kill > 0 {
			assertState(t, d, cfg, history)
		}
		// Kill after a random delay while the stream runs.
		delay := time.Duration(2+r.IntN(120)) * time.Millisecond
		killer := time.AfterFunc(delay, func() { _ = d.cmd.Process.Kill() })
		var pendingAdmit *podSpec
		pendingRelease := ""
		for {
			admit, release := next()
			ok, err := do(d, admit, release)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				pendingAdmit, pendingRelease = admit, release
				break
			}
		}
		killer.Stop()
		d.kill()

		// Restart: first, before any retry, the state is the acknowledged
		// history plus at most the request that was in flight.
		d = startDaemon(t, spec)
		st, err := d.Client.State(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		acked := uint64(countChanges(history))
		switch {
		case st.Generation == acked:
			if !jsonEqual(st.State, replay(t, cfg, history)) {
				t.Fatalf("kill %d: generation %d as acknowledged but the state differs from the replay", kill, st.Generation)
			}
		case st.Generation == acked+1:
			// The in-flight request was committed, its answer lost: the
			// state must be the history plus exactly that request.
			inflight := op{admit: pendingAdmit, release: pendingRelease, generation: acked + 1, changed: true, unanswered: true}
			if !jsonEqual(st.State, replay(t, cfg, append(slices.Clone(history), inflight))) {
				t.Fatalf("kill %d: state is neither the acknowledged history nor it plus the request in flight", kill)
			}
			seenCommitted++
		default:
			t.Fatalf("kill %d: after restart generation %d, acknowledged %d changes: lost or phantom operations", kill, st.Generation, acked)
		}
		// The client retries what it did not get an answer for.
		before := committedInFlight
		if ok, err := do(d, pendingAdmit, pendingRelease); err != nil || !ok {
			t.Fatalf("kill %d: retry failed: %v", kill, err)
		}
		if committedInFlight == before {
			lostInFlight++
		}
		assertState(t, d, cfg, history)
		d.kill()
	}
	t.Logf("%d kills, %d acknowledged operations; in-flight at the kill: %d had been committed (answered from the checkpoint on retry), %d had not (or changed nothing)", kills, len(history), committedInFlight, lostInFlight)
	if seenCommitted != committedInFlight {
		t.Fatalf("%d restarts held the in-flight request, but %d retries were answered as already done", seenCommitted, committedInFlight)
	}
	if len(history) < kills {
		t.Fatalf("only %d operations in %d runs: the stream did not run", len(history), kills)
	}
}

func countChanges(h []op) int {
	n := 0
	for _, o := range h {
		if o.changed {
			n++
		}
	}
	return n
}
