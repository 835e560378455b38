package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/yaml"

	"github.com/numa-partition/numa-partition/internal/echo"
	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/internal/output"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// checkReviewed says whether the reviewed plan of file may be applied as
// now, the plan of this host and config (compareReviewed): when the two
// are the same, or differ only in the machine's moving figures, whose
// decisions stand with today's figures (a warning says so). Anything
// else is refused, naming the first line of file that changed as the
// reviewer saw it, and logging every change.
func checkReviewed(file string, now *planner.Plan, asReviewed func(figures planner.Figures) (*planner.Plan, error)) error {
	r, err := compareReviewed(file, now, asReviewed)
	switch {
	case err != nil:
		return err
	case r.figuresMoved():
		slog.Warn("the reviewed plan differs from what this host plans now only in the machine's own figures, which moved since it was reviewed (a NUMA node's memory, the pid limit): applying its decisions with today's figures", "plan", file, "first difference", summary(r.figureChanges))
	case len(r.changes) > 0:
		logChanges(file, r.changes)
		return fmt.Errorf("%s is not what this host and config plan now (%s): run plan again and review it", file, summary(r.changes))
	}
	return nil
}

// review is how a reviewed plan compares with what the host and config
// plan now. Changes are the lines of the plan file that differ in the
// decisions: between the reviewed plan and this host and config planned
// with the reviewed plan's figures (planner.Figures: a NUMA node's memory
// and the pid limit, which a reboot moves), so that a memory line that
// moved is not named as the change. figureChanges are the lines that
// differ when there are no changes: the plans differ in those figures
// only, and the reviewed decisions are now's.
type review struct {
	changes       []string
	figureChanges []string
}

// figuresMoved says the plans differ, in the machine's moving figures
// only.
func (r review) figuresMoved() bool { return len(r.changes) == 0 && len(r.figureChanges) > 0 }

// compareReviewed compares the reviewed plan of file with now; asReviewed
// plans this host and config with given figures.
func compareReviewed(file string, now *planner.Plan, asReviewed func(figures planner.Figures) (*planner.Plan, error)) (review, error) {
	data, err := fsutil.ReadFileBounded(file, maxPlanFile)
	if err != nil {
		return review{}, fmt.Errorf("reading the plan: %w", err)
	}
	reviewed, err := planner.ParsePlan(file, data)
	if err != nil {
		return review{}, err
	}
	if same, err := samePlan(reviewed, now); same || err != nil {
		return review{}, err
	}
	all, err := changedLines(data, reviewed, now)
	if err != nil {
		return review{}, err
	}
	again, err := asReviewed(planner.FiguresOf(reviewed))
	if err != nil {
		// The config does not plan with the reviewed figures: its
		// decisions are not the reviewed ones.
		slog.Debug("planning with the figures of the reviewed plan", "plan", file, "error", err)
		return review{changes: all}, nil
	}
	decisions, err := changedLines(data, reviewed, again)
	if err != nil {
		return review{}, err
	}
	if len(decisions) == 0 {
		return review{figureChanges: all}, nil
	}
	return review{changes: decisions}, nil
}

// samePlan reports whether plans a and b are one plan, as their JSON
// says.
func samePlan(a, b *planner.Plan) (bool, error) {
	ja, err := json.Marshal(a)
	if err != nil {
		return false, err
	}
	jb, err := json.Marshal(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(ja, jb), nil
}

// maxLoggedChanges bounds the changes a refusal logs: a plan of another
// host differs on every line.
const maxLoggedChanges = 40

// logChanges logs each change of a refused plan, so that the journal of
// a boot that refused it says everything that moved, not the first line
// alone (a reboot moves a node's memory, which is no reason to refuse;
// what else moved is).
func logChanges(file string, changes []string) {
	for i, c := range changes {
		if i == maxLoggedChanges {
			slog.Warn("the reviewed plan differs from this host's plan now: more changes not shown", "plan", file, "more", len(changes)-i)
			return
		}
		slog.Warn("the reviewed plan differs from this host's plan now", "plan", file, "change", c)
	}
}

// planForm is how a plan file was written: plan -o json or -o yaml (with
// apiVersion, kind and nodeResources), or render's plan.json (the bare
// plan, indented JSON).
type planForm struct {
	yaml     bool
	envelope bool
}

// formOf tells the form of a plan file ParsePlan has read.
func formOf(data []byte) planForm {
	t := bytes.TrimSpace(data)
	f := planForm{yaml: len(t) > 0 && t[0] != '{'}
	var meta output.TypeMeta
	if f.yaml {
		_ = yaml.Unmarshal(data, &meta)
	} else {
		_ = json.Unmarshal(data, &meta)
	}
	f.envelope = meta.Kind != ""
	return f
}

func (f planForm) language() string {
	if f.yaml {
		return "YAML"
	}
	return "JSON"
}

// text is plan as a file of form f holds it, as this build writes it.
func (f planForm) text(plan *planner.Plan) ([]byte, error) {
	var b bytes.Buffer
	switch {
	case f.envelope:
		doc, err := planDocument(plan)
		if err != nil {
			return nil, err
		}
		format := "json"
		if f.yaml {
			format = "yaml"
		}
		if err := output.Write(&b, format, kindPlan, doc); err != nil {
			return nil, err
		}
	case f.yaml:
		y, err := yaml.Marshal(plan)
		if err != nil {
			return nil, fmt.Errorf("writing YAML: %w", err)
		}
		b.Write(y)
	default:
		j, err := json.MarshalIndent(plan, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("writing JSON: %w", err)
		}
		b.Write(append(j, '\n'))
	}
	return b.Bytes(), nil
}

// changedLines says where the plan file data (the text reviewed, of the
// plan reviewed) differs from now written the same way: lines of
// data itself, so that the number is the one the reviewer's editor shows
// (comparing a re-encoding of the plan as JSON gave a JSON line number for
// a YAML file, and a number two lines short for plan -o json's file, whose
// apiVersion and kind it lacked: #38 item 9). A file that is not as this
// build writes its plan (edited by hand, or by another build) is compared
// as this build writes it, and the message says so.
func changedLines(data []byte, reviewed, now *planner.Plan) ([]string, error) {
	f := formOf(data)
	b, err := f.text(now)
	if err != nil {
		return nil, err
	}
	lang := "its " + f.language()
	a, err := f.text(reviewed)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(data)) {
		lang += " as this build writes it"
	} else {
		a = data
	}
	return lineChanges(a, b, lang), nil
}

// summary is the first of changes and how many follow.
func summary(changes []string) string {
	if len(changes) == 0 {
		return "the same lines"
	}
	what := changes[0]
	switch more := len(changes) - 1; more {
	case 0:
	case 1:
		what += "; one more change below"
	default:
		what += fmt.Sprintf("; %d more changes below", more)
	}
	return what
}

// lineChanges says where text b differs from a, change by change, by a
// line diff: comparing line i with line i pointed at an unchanged line
// whenever a line was inserted or removed before it (a new label).
func lineChanges(a, b []byte, lang string) []string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	var changes []string
	for _, op := range difflib.NewMatcher(la, lb).GetOpCodes() {
		switch op.Tag {
		case 'r':
			changes = append(changes, fmt.Sprintf("line %d of %s: reviewed %s, now %s", op.I1+1, lang, shownLine(la[op.I1]), shownLine(lb[op.J1])))
		case 'd':
			changes = append(changes, fmt.Sprintf("line %d of %s: reviewed %s, now no such line", op.I1+1, lang, shownLine(la[op.I1])))
		case 'i':
			changes = append(changes, fmt.Sprintf("before line %d of %s: now also %s", op.I1+1, lang, shownLine(lb[op.J1])))
		}
	}
	return changes
}

// shownLine is one line of a plan file as a message quotes it: without
// its indentation and the comma that separates it from the next JSON
// line, and at most echo.MaxBytes of it (a label's value may be long).
func shownLine(l string) string {
	return echo.Value(strings.TrimSuffix(strings.TrimSpace(l), ",")).String()
}
