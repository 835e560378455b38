package importrules

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const (
	module     = "github.com/numa-partition/numa-partition/"
	daemon     = module + "partition/allocator/daemon"
	daemonAPI  = module + "partition/allocator/daemonapi"
	prometheus = "github.com/prometheus/client_golang"
	// k8s.io/kubelet/config/v1beta1 (KubeletConfiguration, which render,
	// kubeletgen and kubeapi use) imports k8s.io/component-base's logging
	// options, whose feature gates register Prometheus metrics: every
	// package that handles a kubelet config links client_golang through
	// there, whatever this module does.
	componentBase = "k8s.io/component-base/"
)

// imports maps every package pkg links (go list -deps: its imports,
// transitively, tests excluded, as go build on this platform sees them)
// to the packages it imports.
func imports(t *testing.T, pkg string) map[string][]string {
	t.Helper()
	// go test puts its own toolchain first in PATH, so this is the go
	// that builds the packages under test.
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", pkg).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		graph[fields[0]] = fields[1:]
	}
	if len(graph) < 2 {
		t.Fatalf("go list -deps %s listed %d packages", pkg, len(graph))
	}
	return graph
}

// within reports whether pkg is tree or a package below it.
func within(pkg, tree string) bool {
	return pkg == tree || strings.HasPrefix(pkg, tree+"/")
}

// importersOf returns the linked packages outside tree that import a
// package of tree, sorted: the doors through which tree comes in.
func importersOf(graph map[string][]string, tree string) []string {
	var doors []string
	for pkg, imps := range graph {
		if within(pkg, tree) {
			continue
		}
		if slices.ContainsFunc(imps, func(i string) bool { return within(i, tree) }) {
			doors = append(doors, pkg)
		}
	}
	slices.Sort(doors)
	return doors
}

// A client of the allocator daemon links its API package, not the daemon:
// the daemon brings its server, checkpoint and Prometheus metrics.
func TestDaemonClientsDoNotLinkTheDaemon(t *testing.T) {
	for _, pkg := range []string{daemonAPI, module + "slices/apply"} {
		if _, ok := imports(t, pkg)[daemon]; ok {
			t.Errorf("%s links %s: talk to the daemon through %s", pkg, daemon, daemonAPI)
		}
	}
}

// The daemon's API package links no Prometheus at all, and slices/apply
// only the part kubelet's config types drag in: neither this module nor
// anything else brings it in beside k8s.io/component-base.
func TestDaemonClientsLinkNoPrometheusOfTheirOwn(t *testing.T) {
	if doors := importersOf(imports(t, daemonAPI), prometheus); len(doors) > 0 {
		t.Errorf("%s links %s through %s", daemonAPI, prometheus, strings.Join(doors, ", "))
	}
	for _, door := range importersOf(imports(t, module+"slices/apply"), prometheus) {
		if !strings.HasPrefix(door, componentBase) {
			t.Errorf("slices/apply links %s through %s", prometheus, door)
		}
	}
}

// The planner and the allocator meet in neither: both use kubelet's
// policies (partition/policy), and partition/fromplan, which imports
// both, makes the allocator's config and the daemon's options from the
// plan (oneway_test.go holds the planner to its side). The daemon takes an
// allocator.Config and an address; the planner's value rules
// (partition/planner/validation, a leaf) are shared.
func TestTheAllocatorDoesNotImportThePlanner(t *testing.T) {
	forbidden := []string{module + "partition/planner", module + "partition/planner/config"}
	graph := imports(t, module+"partition/allocator/...")
	for pkg, imps := range graph {
		if !within(pkg, module+"partition/allocator") {
			continue
		}
		for _, imp := range imps {
			if slices.Contains(forbidden, imp) {
				t.Errorf("%s imports %s: give it what it needs from the plan as an argument instead", pkg, imp)
			}
		}
	}
	if _, ok := graph[daemon]; !ok {
		t.Fatalf("go list -deps partition/allocator/... did not list %s", daemon)
	}
}

// The rules above pass vacuously if go list or the matching finds
// nothing: the daemon's own Prometheus imports must be seen.
func TestTheDaemonIsSeenLinkingPrometheus(t *testing.T) {
	doors := importersOf(imports(t, daemon), prometheus)
	if !slices.Contains(doors, daemon) {
		t.Fatalf("%s is not among the importers of %s found: %v", daemon, prometheus, doors)
	}
}

// The allocator daemon checks its partition's drift with status's rules
// (slices/drift) without linking status's package: slices/apply links
// systemd's D-Bus, the apply machinery and kubelet's state files, and
// imports the daemon's API back (#40).
func TestTheDaemonDoesNotLinkApply(t *testing.T) {
	apply, drift := module+"slices/apply", module+"slices/drift"
	for _, pkg := range []string{daemon, module + "partition/allocator/nodecondition", drift} {
		graph := imports(t, pkg)
		if _, ok := graph[apply]; ok {
			t.Errorf("%s links %s: share its rules through %s", pkg, apply, drift)
		}
	}
	if _, ok := imports(t, apply)[drift]; !ok {
		t.Fatalf("%s does not link %s: status has its own drift rules again", apply, drift)
	}
}

// The bundle is the contract between render and apply: it links no
// planning package, and apply, status and remove read the plan only
// through it (apply's preflight, which checks the plan file the bundle
// installs, is the one door).
func TestTheBundleIsALeafApplyConsumes(t *testing.T) {
	bundle := module + "slices/bundle"
	graph := imports(t, bundle)
	for pkg := range graph {
		if within(pkg, module+"partition") || within(pkg, module+"slices/render") || within(pkg, module+"kubeletgen") {
			t.Errorf("%s links %s: the contract holds no planning or rendering type", bundle, pkg)
		}
	}
	apply := module + "slices/apply"
	imps := imports(t, apply)[apply]
	if !slices.Contains(imps, bundle) {
		t.Fatalf("%s does not import %s: the rule below would pass vacuously", apply, bundle)
	}
	for _, imp := range imps {
		if within(imp, module+"slices/render") || within(imp, module+"partition/planner") {
			t.Errorf("%s imports %s: it takes the rendered bundle (%s), never the renderer or the plan", apply, imp, bundle)
		}
	}
}
