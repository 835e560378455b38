package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/numa-partition/numa-partition/internal/output"
)

// PlanKind is the kind of plan -o json's object (apiVersion
// output.APIVersion), which ParsePlan reads back.
const PlanKind = "Plan"

// maxPlanFieldErrors is how many unknown or duplicate fields one error
// names; the count says how many more.
const maxPlanFieldErrors = 10

// ParsePlan decodes a plan's JSON (plan -o json, or the rendered
// plan.json) or YAML (plan -o yaml) for render, apply and the allocator.
// It decodes strictly: what a reviewer reads is what is applied, so an
// unknown field, a field given twice (the last one won) or a field in
// another case (matched before) is an error, not ignored. The apiVersion
// and kind plan -o json writes must be output.APIVersion and Plan; a file
// without both (written before they were, or the rendered plan.json) is
// read as a plan. A partition's allocator.metricsAddr, which builds before
// allocator.metricsPort wrote ("127.0.0.1:9410") and a host applied by
// one still has in its rendered plan.json, is read as its port
// (legacyMetricsAddr). name is the file, for messages. A plan this
// build's planner would not have written (CheckPlanFile) is refused
// here, once, for every reader.
func ParsePlan(name string, data []byte) (*Plan, error) {
	plan, err := DecodePlan(name, data)
	if err != nil {
		return nil, err
	}
	// Held to the planner's rules here, where it enters: render,
	// kubeletgen and the allocator daemon take a plan as decided.
	if err := CheckPlanFile(plan); err != nil {
		return nil, fmt.Errorf("%s: not a plan this build would write: %w", name, err)
	}
	return plan, nil
}

// DecodePlan is ParsePlan without the planner's rules: for the plan.json
// this tool rendered from a plan already held to them (the bundle's,
// which apply's preflight reads back; the one the last apply installed,
// which a rolling apply starts from).
func DecodePlan(name string, data []byte) (*Plan, error) {
	var doc struct {
		output.TypeMeta
		Plan
		// NodeResources is what plan -o json adds beside the plan: derived
		// from it, so read by nobody.
		NodeResources json.RawMessage `json:"nodeResources"`
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] != '{' {
		// Not a JSON object: plan -o yaml's document, read as the same
		// JSON (a key given twice refused).
		j, err := yaml.YAMLToJSONStrict(data)
		if err != nil {
			return nil, fmt.Errorf("%s: not a plan (plan -o json or -o yaml): %w", name, err)
		}
		if string(j) == "null" {
			return nil, fmt.Errorf("%s: not a plan (plan -o json or -o yaml): an empty document", name)
		}
		data = j
	}
	strict, err := sjson.UnmarshalStrict(data, &doc)
	if err != nil {
		return nil, fmt.Errorf("%s: not a plan (plan -o json): %w", name, err)
	}
	strict, err = legacyMetricsAddr(name, data, &doc.Plan, strict)
	if err != nil {
		return nil, err
	}
	if len(strict) > 0 {
		n := min(len(strict), maxPlanFieldErrors)
		msgs := make([]string, n)
		for i, e := range strict[:n] {
			msgs[i] = e.Error()
		}
		more := ""
		if len(strict) > n {
			more = fmt.Sprintf("; and %d more", len(strict)-n)
		}
		return nil, fmt.Errorf("%s: not a plan as this build writes it (fields are exact-case, once each; plan -o json writes one): %s%s", name, strings.Join(msgs, "; "), more)
	}
	if err := output.Check(name, PlanKind, doc.TypeMeta); err != nil {
		return nil, fmt.Errorf("%s (plan -o json writes one)", err)
	}
	return &doc.Plan, nil
}

// legacyMetricsAddr reads the allocator.metricsAddr of plan files written
// before the plan carried the port as a number (allocator.metricsPort):
// the rendered plan.json of a host applied by such a build, which its
// allocators read at every start and a rolling apply reads as the plan
// the host runs. Only what those builds wrote, "127.0.0.1:PORT" with PORT
// in 1-65535, becomes plan's MetricsPort; anything else, or both fields,
// is an error naming the field and saying to re-plan. It returns strict
// without the unknown-field errors it answered.
func legacyMetricsAddr(name string, data []byte, plan *Plan, strict []error) ([]error, error) {
	var legacy struct {
		Partitions []struct {
			Allocator struct {
				MetricsAddr *string `json:"metricsAddr"`
			} `json:"allocator"`
		} `json:"partitions"`
	}
	if err := sjson.UnmarshalCaseSensitivePreserveInts(data, &legacy); err != nil {
		return strict, nil // the strict decode read it: nothing of ours
	}
	answered := map[string]bool{}
	for i, lp := range legacy.Partitions {
		addr := lp.Allocator.MetricsAddr
		if addr == nil || i >= len(plan.Partitions) {
			continue
		}
		field := fmt.Sprintf("partitions[%d].allocator.metricsAddr", i)
		a := &plan.Partitions[i].Allocator
		host, port, err := net.SplitHostPort(*addr)
		n, perr := strconv.Atoi(port)
		switch {
		case a.MetricsPort != 0:
			return nil, fmt.Errorf("%s: %s %q beside metricsPort %d: metricsAddr is what builds before metricsPort wrote; re-plan with this build (plan -o json, or render)", name, field, *addr, a.MetricsPort)
		case err != nil || host != "127.0.0.1" || perr != nil || n < 1 || n > 65535:
			return nil, fmt.Errorf("%s: %s %q: this build reads the field builds before allocator.metricsPort wrote only as 127.0.0.1:PORT (PORT 1-65535); re-plan with this build (plan -o json, or render)", name, field, *addr)
		}
		a.MetricsPort = n
		answered[fmt.Sprintf("unknown field %q", field)] = true
	}
	if len(answered) == 0 {
		return strict, nil
	}
	var rest []error
	for _, e := range strict {
		if !answered[e.Error()] {
			rest = append(rest, e)
		}
	}
	return rest, nil
}
