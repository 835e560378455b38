package planner

import (
	"encoding/json"
	"fmt"
	"strings"

	sjson "sigs.k8s.io/json"
)

// maxPlanFieldErrors is how many unknown or duplicate fields one error
// names; the count says how many more.
const maxPlanFieldErrors = 10

// ParsePlan decodes a plan's JSON (plan -o json, or the rendered
// plan.json) for render, apply and the allocator. It decodes strictly:
// what a reviewer reads is what is applied, so an unknown field, a field
// given twice (the last one won) or a field in another case (matched
// before) is an error, not ignored. name is the file, for messages.
func ParsePlan(name string, data []byte) (*Plan, error) {
	var doc struct {
		Plan
		// NodeResources is what plan -o json adds beside the plan: derived
		// from it, so read by nobody.
		NodeResources json.RawMessage `json:"nodeResources"`
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
	return &doc.Plan, nil
}
