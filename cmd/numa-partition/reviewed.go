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

// reviewedPlan is the plan of file when it is what this host and config
// plan now, or when it makes the same host (sameHost: its rendered files
// are now's but for the plan's own copy, as when a reboot moved a NUMA
// node's memory size, which kubelet and the allocator count as the
// machine has it): what was reviewed is applied, or nothing is. When it
// is not, the error names the first line of file that changed, as the
// reviewer saw it.
func reviewedPlan(file string, now *planner.Plan, sameHost func(reviewed *planner.Plan) (bool, error)) (*planner.Plan, error) {
	data, err := fsutil.ReadFileBounded(file, maxPlanFile)
	if err != nil {
		return nil, fmt.Errorf("reading the plan: %w", err)
	}
	reviewed, err := planner.ParsePlan(file, data)
	if err != nil {
		return nil, err
	}
	a, err := json.MarshalIndent(reviewed, "", "  ")
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(now, "", "  ")
	if err != nil {
		return nil, err
	}
	if bytes.Equal(a, b) {
		return reviewed, nil
	}
	where, err := changedLine(data, reviewed, now)
	if err != nil {
		return nil, err
	}
	same, err := sameHost(reviewed)
	if err != nil {
		return nil, fmt.Errorf("rendering the reviewed plan %s: %w", file, err)
	}
	if same {
		slog.Warn("the reviewed plan differs from what this host plans now only where no rendered file does (the machine's own figures, such as a NUMA node's memory after a reboot): applying it", "plan", file, "first difference", where)
		return reviewed, nil
	}
	return nil, fmt.Errorf("%s is not what this host and config plan now (%s): run plan again and review it", file, where)
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

// changedLine says where the plan file data (the text reviewed, of the
// plan reviewed) first differs from now written the same way: a line of
// data itself, so that the number is the one the reviewer's editor shows
// (comparing a re-encoding of the plan as JSON gave a JSON line number for
// a YAML file, and a number two lines short for plan -o json's file, whose
// apiVersion and kind it lacked: #38 item 9). A file that is not as this
// build writes its plan (edited by hand, or by another build) is compared
// as this build writes it, and the message says so.
func changedLine(data []byte, reviewed, now *planner.Plan) (string, error) {
	f := formOf(data)
	b, err := f.text(now)
	if err != nil {
		return "", err
	}
	lang := "its " + f.language()
	a, err := f.text(reviewed)
	if err != nil {
		return "", err
	}
	if !bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(data)) {
		lang += " as this build writes it"
	} else {
		a = data
	}
	return firstChange(a, b, lang), nil
}

// firstChange says where text b first differs from a, by a line diff:
// comparing line i with line i pointed at an unchanged line whenever a
// line was inserted or removed before it (a new label). lang names the
// text: "its YAML".
func firstChange(a, b []byte, lang string) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	var changes []difflib.OpCode
	for _, op := range difflib.NewMatcher(la, lb).GetOpCodes() {
		if op.Tag != 'e' {
			changes = append(changes, op)
		}
	}
	if len(changes) == 0 {
		return "the same lines"
	}
	op := changes[0]
	var what string
	switch op.Tag {
	case 'r':
		what = fmt.Sprintf("line %d of %s: reviewed %s, now %s", op.I1+1, lang, shownLine(la[op.I1]), shownLine(lb[op.J1]))
	case 'd':
		what = fmt.Sprintf("line %d of %s: reviewed %s, now no such line", op.I1+1, lang, shownLine(la[op.I1]))
	default: // 'i'
		what = fmt.Sprintf("before line %d of %s: now also %s", op.I1+1, lang, shownLine(lb[op.J1]))
	}
	switch more := len(changes) - 1; more {
	case 0:
	case 1:
		what += "; one more change below"
	default:
		what += fmt.Sprintf("; %d more changes below", more)
	}
	return what
}

// shownLine is one line of a plan file as a message quotes it: without
// its indentation and the comma that separates it from the next JSON
// line, and at most echo.MaxBytes of it (a label's value may be long).
func shownLine(l string) string {
	return echo.Value(strings.TrimSuffix(strings.TrimSpace(l), ",")).String()
}
