package transaction

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
)

// Step is one action of a transaction and why it is needed.
type Step struct {
	Action
	// Reason says why the step is needed ("" when its kind says it).
	Reason string
}

// Action is what one kind of step does. Each kind is a type in its own
// file (step_*.go) with its Kind, its words in apply's report and how it
// runs and is undone; Plan's phases (plan.go) decide which are needed and
// in what order.
type Action interface {
	// Kind names the action in the report and in JSON.
	Kind() Kind
	// describe is what the report prints after the kind: its object.
	describe() string
	// run does the action on the host and returns how to undo it. cur is
	// what Gather read before planning, which the undo restores; res
	// collects what the run found (hugepage shortfalls).
	run(e *Executor, ctx context.Context, cur Current, res *Result) ([]undo, error)
}

// Kind is what a Step does, as apply's report and JSON name it.
type Kind string

func (s Step) String() string {
	out := string(s.Kind())
	if d := s.describe(); d != "" {
		out += " " + d
	}
	if s.Reason != "" {
		out += " (" + s.Reason + ")"
	}
	return out
}

// MarshalJSON writes a step as one object: its kind, the action's own
// fields, then its reason (`apply --output json`).
func (s Step) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"kind":`)
	if err := encodeJSON(&b, s.Kind()); err != nil {
		return nil, err
	}
	var fields bytes.Buffer
	if err := encodeJSON(&fields, s.Action); err != nil {
		return nil, fmt.Errorf("step %s: %w", s.Kind(), err)
	}
	if inner := bytes.TrimSpace(fields.Bytes()); len(inner) > 2 {
		b.WriteByte(',')
		b.Write(inner[1 : len(inner)-1])
	}
	if s.Reason != "" {
		b.WriteString(`,"reason":`)
		if err := encodeJSON(&b, s.Reason); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encodeJSON appends v's JSON to b unescaped: the encoder that writes the
// whole report escapes HTML or not, as it was told.
func encodeJSON(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

// StartedUnit is the unit a start or restart step starts.
func (s Step) StartedUnit() (string, bool) {
	switch a := s.Action.(type) {
	case StartUnit:
		return a.Unit, true
	case RestartUnit:
		return a.Unit, true
	}
	return "", false
}

// FileChange is the file a write or remove step changes, and what it
// writes there (nothing for a remove).
func (s Step) FileChange() (a WriteFile, removed, ok bool) {
	switch a := s.Action.(type) {
	case WriteFile:
		return a, false, true
	case RemoveFile:
		return WriteFile{Path: a.Path}, true, true
	}
	return WriteFile{}, false, false
}
