package main

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/internal/output"
	"github.com/numa-partition/numa-partition/kubeletgen"
	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
	"github.com/numa-partition/numa-partition/partition/allocator/scenario"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/slices/apply"
	"github.com/numa-partition/numa-partition/slices/apply/status"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// The kinds of the objects the commands print with --output json or yaml
// (apiVersion output.APIVersion).
const (
	kindTopology       = "Topology"
	kindPlan           = planner.PlanKind
	kindRenderBundle   = "RenderBundle"
	kindApplyReport    = "ApplyReport"
	kindStatus         = "Status"
	kindRemoveReport   = "RemoveReport"
	kindAdmission      = "Admission"
	kindRelease        = "Release"
	kindAllocationList = "AllocationList"
	kindSimulation     = "SimulationReport"
	kindVersion        = "Version"
)

// outputKind is one kind of printed object: the command printing it and
// the Go type it is written from, which writeData checks and output
// reference documents.
type outputKind struct {
	kind    string
	command string
	typ     reflect.Type
	about   string
	doc     string // the hand-written doc of its fields' meaning, if any
}

// outputKinds are every kind of object printed, in the order the doc
// lists them. writeData refuses a kind not listed here, or a value of
// another type than its kind's.
var outputKinds = []outputKind{
	{kindTopology, "discover", reflect.TypeFor[numa.Topology](), "The machine's NUMA topology as read from sysfs.", "docs/discover.md"},
	{kindPlan, "plan", reflect.TypeFor[planOutput](), "The plan, and what each partition's Node will publish. apply --plan and render --plan read it back (JSON or YAML).", "docs/plan.md"},
	{kindRenderBundle, "render", reflect.TypeFor[bundle.Bundle](), "The files, units, ports and hugepages a render makes (file contents are not included: render --out writes them).", "docs/render.md"},
	{kindApplyReport, "apply", reflect.TypeFor[apply.Report](), "What apply did, or with --dry-run would do.", "docs/apply.md"},
	{kindStatus, "status", reflect.TypeFor[status.Status](), "The applied partitions' units, cpusets, memory, health, Nodes and drift.", "docs/apply.md"},
	{kindRemoveReport, "remove", reflect.TypeFor[apply.RemoveReport](), "What remove did, or with --dry-run would do.", "docs/apply.md"},
	{kindAdmission, "admit", reflect.TypeFor[admission](), "A partition allocator's decision on a Pod or VirtualMachineInstance. The manifest's own kind is manifestKind.", "docs/allocator-daemon.md"},
	{kindRelease, "release", reflect.TypeFor[daemonapi.ReleaseResponse](), "A released pod.", "docs/allocator-daemon.md"},
	{kindAllocationList, "allocations", reflect.TypeFor[allocationList](), "The pods holding NUMA memory, one item per partition.", "docs/allocator-daemon.md"},
	{kindSimulation, "simulate", reflect.TypeFor[scenario.Report](), "A scenario's decisions and the final MemoryTables.", "docs/allocator.md"},
	{kindVersion, "version", reflect.TypeFor[buildInfo](), "The build.", ""},
}

// planOutput is plan's object: the Plan's keys, plus what each Node will
// publish.
type planOutput struct {
	*planner.Plan
	NodeResources []kubeletgen.NodeResources `json:"nodeResources"`
}

// allocationList is allocations' object: a list is one object with its
// items, as kubectl prints them, never a bare array.
type allocationList struct {
	Items []daemonapi.AllocationsResponse `json:"items"`
}

// admission is admit's object: the daemon's answer, whose own "kind" (the
// manifest's: Pod or VirtualMachineInstance) is manifestKind here, since
// kind is the object's.
type admission struct {
	Partition    string             `json:"partition"`
	ManifestKind string             `json:"manifestKind"`
	Decision     allocator.Decision `json:"decision"`
	Generation   uint64             `json:"generation"`
	Repeated     bool               `json:"repeated,omitempty"`
}

func newAdmission(r daemonapi.AdmitResponse) admission {
	return admission{Partition: r.Partition, ManifestKind: r.Kind, Decision: r.Decision, Generation: r.Generation, Repeated: r.Repeated}
}

// writeData is the one writer of machine-readable output: the object of
// kind with apiVersion and kind first (output.Write), as indented JSON
// with the struct definitions' field order, or the same document as
// YAML (keys as in the JSON, sorted, after apiVersion and kind).
func writeData(w io.Writer, format, kind string, v any) error {
	k, ok := outputKindNamed(kind)
	if !ok {
		return fmt.Errorf("output: kind %q is not in outputKinds", kind)
	}
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != k.typ {
		return fmt.Errorf("output: kind %s is written from %s, not %v", kind, k.typ, t)
	}
	return output.Write(w, format, kind, v)
}

func outputKindNamed(kind string) (outputKind, bool) {
	for _, k := range outputKinds {
		if k.kind == kind {
			return k, true
		}
	}
	return outputKind{}, false
}

// outputReferenceCommand prints docs/output-reference.md (make generate).
func outputReferenceCommand() *cli.Command {
	return &cli.Command{
		Name:   "output-reference",
		Usage:  "print the schema of every object --output json or yaml prints (markdown), generated from the Go types",
		Hidden: true,
		Action: func(c *cli.Context) error {
			_, err := io.WriteString(c.App.Writer, outputReference())
			return err
		},
	}
}

// outputReference is the markdown reference of every output kind: each
// field's path, JSON type and Go type, from the types themselves.
func outputReference() string {
	var b strings.Builder
	b.WriteString("<!-- Generated by `numa-partition output-reference` (make generate); do not edit. -->\n\n")
	b.WriteString("# Output reference\n\n")
	fmt.Fprintf(&b, "Every object numa-partition prints with `--output json` or `--output yaml`\n"+
		"starts with `apiVersion: %s` and its `kind`, then its own\n"+
		"fields. Lists are one object with `items`, never a bare array. Fields are only\n"+
		"added within a version; a change that breaks a reader gets a new apiVersion.\n"+
		"`--output jsonpath=TEMPLATE` (kubectl's JSONPath; `jsonpath-file=FILE` reads it)\n"+
		"is evaluated on the same object, so the paths below are the template's:\n"+
		"`numa-partition discover -o jsonpath='{.nodes[*].id}'`.\n\n", output.APIVersion)
	b.WriteString("`apply --plan FILE` and `render --plan FILE` read a Plan back, JSON or YAML: a\n" +
		"file without apiVersion and kind (written before they were) is read as a plan;\n" +
		"another apiVersion or kind is refused, naming the file and the field.\n\n")
	b.WriteString("| kind | printed by | Go type |\n|---|---|---|\n")
	for _, k := range outputKinds {
		fmt.Fprintf(&b, "| [%s](#%s) | `numa-partition %s -o json` | %s |\n", k.kind, strings.ToLower(k.kind), k.command, goTypeName(k.typ))
	}
	b.WriteString("\nIn the tables: `a[]` is each element of the array `a`, `m.*` each value of\n" +
		"the object (map) `m`; optional fields are left out when empty.\n")
	for _, k := range outputKinds {
		fmt.Fprintf(&b, "\n## %s\n\n%s", k.kind, k.about)
		if k.doc != "" {
			fmt.Fprintf(&b, " What the fields mean: [%s](%s).", k.doc, strings.TrimPrefix(k.doc, "docs/"))
		}
		b.WriteString("\n\n| field | type | Go type |\n|---|---|---|\n")
		fmt.Fprintf(&b, "| `apiVersion` | string: `%s` | |\n", output.APIVersion)
		fmt.Fprintf(&b, "| `kind` | string: `%s` | |\n", k.kind)
		for _, f := range output.Schema(k.typ) {
			typ := f.Type
			if f.Optional {
				typ += ", optional"
			}
			fmt.Fprintf(&b, "| `%s` | %s | `%s` |\n", f.Path, typ, f.GoType)
		}
	}
	return b.String()
}

// goTypeName names a kind's Go type for the doc; this command's own
// (main.planOutput) by where it lies.
func goTypeName(t reflect.Type) string {
	if t.PkgPath() == "main" || strings.HasSuffix(t.PkgPath(), "/cmd/numa-partition") {
		return "`" + t.Name() + "` (cmd/numa-partition)"
	}
	return "`" + t.String() + "`"
}

// printsObjects says whether the command named name prints an object of
// outputKinds (or plan's pictures) with --output; the others refuse any
// --output but table rather than ignore it.
func printsObjects(name string) bool {
	return slices.Contains(objectCommands(), name)
}

// objectCommands are the commands that print objects with --output.
func objectCommands() []string {
	var out []string
	for _, k := range outputKinds {
		if !slices.Contains(out, k.command) {
			out = append(out, k.command)
		}
	}
	return out
}
