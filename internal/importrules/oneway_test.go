package importrules

import (
	"strings"
	"testing"
)

// The planner and the allocator import one way (#39). Both decide by
// kubelet's managers (partition/policy); what the allocator is told from
// a plan is made by partition/fromplan, which imports both. The planner
// once imported the allocator (planner.AllocatorConfig, the managers
// under partition/allocator) while the allocator's packages imported the
// planner's: either would come back with one import line.

const (
	plannerTree   = module + "partition/planner"
	allocatorTree = module + "partition/allocator"
	policyTree    = module + "partition/policy"
)

// linksNone fails for each of trees that a package of from's tree links,
// naming the packages through which it comes in, and stops the test if
// go list did not list each of seen (a rule that finds no package passes
// vacuously).
func linksNone(t *testing.T, from string, trees []string, seen ...string) {
	t.Helper()
	graph := imports(t, from+"/...")
	for _, pkg := range seen {
		if _, ok := graph[pkg]; !ok {
			t.Fatalf("go list -deps %s/... did not list %s", from, pkg)
		}
	}
	for _, tree := range trees {
		if doors := importersOf(graph, tree); len(doors) > 0 {
			t.Errorf("%s/... links %s through %s", from, tree, strings.Join(doors, ", "))
		}
	}
}

// The planner decides a plan and no allocation: the allocator's config is
// made from the plan by partition/fromplan, and kubelet's managers, whose
// options and bounds the planner checks, are partition/policy's.
func TestThePlannerDoesNotImportTheAllocator(t *testing.T) {
	linksNone(t, plannerTree, []string{allocatorTree},
		plannerTree, plannerTree+"/config", policyTree+"/topologymanager")
}

// kubelet's managers are what the planner and the allocator share: they
// import neither.
func TestPolicyImportsNeitherPlannerNorAllocator(t *testing.T) {
	linksNone(t, policyTree, []string{plannerTree, allocatorTree},
		policyTree+"/topologymanager", policyTree+"/memorymanager")
}
