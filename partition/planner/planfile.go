package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
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
// read as a plan. name is the file, for messages.
func ParsePlan(name string, data []byte) (*Plan, error) {
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
