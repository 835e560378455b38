package daemon_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestConcurrentAdmissions: 16 clients make 1,024 admissions (and release
// about a third of their admitted pods) against the real daemon. Every
// decision must be the one a sequential allocator makes when the
// acknowledged operations are replayed in generation order, and no byte
// may be promised twice. The state must then survive a clean restart.
func TestConcurrentAdmissions(t *testing.T) {
	const clients, perClient = 16, 64
	dir := t.TempDir()
	cfg := testConfig()
	spec := daemonSpec{dir: dir, config: writeConfig(t, dir, cfg)}
	d := startDaemon(t, spec)

	var mu sync.Mutex
	var history []op
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 7))
			var mine []string
			for i := range perClient {
				if len(mine) > 0 && r.IntN(3) == 0 {
					k := r.IntN(len(mine))
					uid := mine[k]
					mine = append(mine[:k], mine[k+1:]...)
					resp, err := d.Client.Release(context.Background(), uid)
					if err != nil {
						errs <- fmt.Errorf("release %s: %w", uid, err)
						return
					}
					mu.Lock()
					history = append(history, op{release: uid, generation: resp.Generation, changed: true})
					mu.Unlock()
				}
				p := randomPod(r, fmt.Sprintf("c%02d-%03d", c, i))
				resp, err := d.Client.Admit(context.Background(), p.yaml(t))
				if err != nil {
					errs <- fmt.Errorf("admit %s: %w", p.uid, err)
					return
				}
				if resp.Decision.Admitted {
					mine = append(mine, p.uid)
				}
				mu.Lock()
				history = append(history, op{admit: &p, decision: resp.Decision, generation: resp.Generation, changed: resp.Decision.Admitted})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	admissions, admitted := 0, 0
	for _, o := range history {
		if o.admit != nil {
			admissions++
			if o.decision.Admitted {
				admitted++
			}
		}
	}
	if admissions < 1000 || admitted == 0 || admitted == admissions {
		t.Fatalf("%d admissions, %d admitted: the test must admit and reject", admissions, admitted)
	}
	sortHistory(history)
	assertState(t, d, cfg, history)
	t.Logf("%d admissions (%d admitted, %d rejected), %d operations in all, replay matches", admissions, admitted, admissions-admitted, len(history))

	d.stop()
	d = startDaemon(t, spec)
	assertState(t, d, cfg, history)
}
