package importrules

import (
	"slices"
	"strings"
	"testing"
)

// slices/apply is cut along its contracts (#39): the record and the host
// access are leaves every other part reads, status reads what apply left
// without linking the transaction, the Nodes' orchestration is handed
// what the transaction decided as data, the host transaction knows
// neither of them nor the apply and remove that call it, and
// slices/apply, the top, is imported by none of its parts.
const (
	applyTop    = module + "slices/apply"
	applyRecord = applyTop + "/record"
	applyHost   = applyTop + "/host"
	applyStatus = applyTop + "/status"
	applyNodes  = applyTop + "/nodes"
	applyTxn    = applyTop + "/transaction"
)

// applyParts are the packages below slices/apply, as go list sees them
// (tests excluded): every part the rules below hold.
func applyParts(t *testing.T) map[string][]string {
	t.Helper()
	graph := imports(t, applyTop+"/...")
	parts := map[string][]string{}
	for pkg, imps := range graph {
		if within(pkg, applyTop) && pkg != applyTop {
			parts[pkg] = imps
		}
	}
	for _, want := range []string{applyRecord, applyHost, applyStatus, applyNodes, applyTxn} {
		if _, ok := parts[want]; !ok {
			t.Fatalf("go list -deps %s/... did not list %s: the rules below would pass vacuously", applyTop, want)
		}
	}
	return parts
}

// No part of slices/apply imports it back: the top composes its parts,
// and a part that needed the top would make the cut a cycle in waiting.
func TestNoPartOfApplyImportsApply(t *testing.T) {
	for pkg, imps := range applyParts(t) {
		if slices.Contains(imps, applyTop) {
			t.Errorf("%s imports %s: the top composes its parts, never the other way round", pkg, applyTop)
		}
	}
}

// Each part of slices/apply imports only the parts below it: the record
// and the host access are leaves (the record writes itself through the
// host's atomic write, nothing more); status and the Nodes' orchestration
// read the record and the host, and neither imports the other; so does
// the host transaction, which imports neither of them. A part not listed
// here is new: say what it may import.
func TestApplysPartsImportOnlyTheirLeaves(t *testing.T) {
	allowed := map[string][]string{
		applyHost:                        nil,
		applyRecord:                      {applyHost},
		applyStatus:                      {applyRecord, applyHost},
		applyNodes:                       {applyRecord, applyHost},
		applyTxn:                         {applyRecord, applyHost},
		applyTop + "/internal/applytest": nil,
	}
	for part, imps := range applyParts(t) {
		may, known := allowed[part]
		if !known {
			t.Errorf("%s is a part of slices/apply this test does not know: list what it may import", part)
			continue
		}
		for _, imp := range imps {
			if within(imp, applyTop) && !slices.Contains(may, imp) {
				t.Errorf("%s imports %s: a part of slices/apply imports only %v", part, imp, may)
			}
		}
	}
}

// Status reads what apply left (the record) and the live host; it links
// neither the transaction, nor the renderer or the planner, nor the
// allocator daemon it only probes (through daemonapi's client).
func TestStatusLinksOnlyWhatItReads(t *testing.T) {
	graph := imports(t, applyStatus)
	if _, ok := graph[applyRecord]; !ok {
		t.Fatalf("%s does not link %s: the rule below would pass vacuously", applyStatus, applyRecord)
	}
	for pkg := range graph {
		switch {
		case pkg == applyTop:
			t.Errorf("%s links %s: status reads the record, not the transaction that writes it", applyStatus, pkg)
		case within(pkg, module+"slices/render") || within(pkg, module+"partition/planner"):
			t.Errorf("%s links %s: status reads what apply left, never the plan or the renderer", applyStatus, pkg)
		case pkg == daemon:
			t.Errorf("%s links %s: probe the daemon through %s", applyStatus, daemon, daemonAPI)
		}
	}
	for _, door := range importersOf(graph, prometheus) {
		if !strings.HasPrefix(door, componentBase) {
			t.Errorf("%s links %s through %s", applyStatus, prometheus, door)
		}
	}
}

// The host transaction (plan, steps, executor with rollback, the pending
// record) links neither the apply and remove that call it, nor the Nodes'
// orchestration, nor status: what it decides goes up as data (its steps),
// and what it needs of them comes down as arguments.
func TestTransactionLinksNoOrchestration(t *testing.T) {
	graph := imports(t, applyTxn)
	if _, ok := graph[applyRecord]; !ok {
		t.Fatalf("%s does not link %s: the rule below would pass vacuously", applyTxn, applyRecord)
	}
	for _, top := range []string{applyTop, applyNodes, applyStatus} {
		if _, ok := graph[top]; ok {
			t.Errorf("%s links %s through %v: the transaction is called, it calls none of them", applyTxn, top, importersOf(graph, top))
		}
	}
}
