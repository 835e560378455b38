package planner

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/numa-partition/numa-partition/internal/echo"
	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// defaultName is the seed recipe's naming: node<first NUMA node id>.
func defaultName(firstNode int) string { return "node" + strconv.Itoa(firstNode) }

// colorOf is the colour of partition index i.
func colorOf(i int) string {
	if i < len(config.Colors) {
		return config.Colors[i]
	}
	return "color" + strconv.Itoa(i)
}

// templateVars are what {placeholders} in path and name templates expand to.
type templateVars struct {
	partition string
	index     int
	hostname  string
	rootDir   string // empty while expanding root_dir itself
}

var placeholderRe = regexp.MustCompile(`\{([^{}]*)\}`)

// expand replaces the placeholders of tmpl. It returns the placeholders it
// does not know, so the caller can report them with the key.
func (v templateVars) expand(tmpl string) (string, []string) {
	var unknown []string
	out := placeholderRe.ReplaceAllStringFunc(tmpl, func(m string) string {
		switch name := m[1 : len(m)-1]; name {
		case "partition":
			return v.partition
		case "index":
			return strconv.Itoa(v.index)
		case "hostname":
			return v.hostname
		case "root_dir":
			if v.rootDir != "" {
				return v.rootDir
			}
		}
		unknown = append(unknown, m)
		return m
	})
	return out, unknown
}

// NodeLabelsArg is kubelet's --node-labels argument for labels, "" for
// none. Render writes it and plan checks it with validation.ArgProblem, so that a
// plan whose labels no command line can carry (20,000 of them) is refused
// at the config's labels.
func NodeLabelsArg(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	keys := sortedKeys(labels)
	pairs := make([]string, len(keys))
	for i, key := range keys {
		pairs[i] = key + "=" + labels[key]
	}
	return "--node-labels=" + strings.Join(pairs, ",")
}

// ownLabelPrefix is numa-partition's label and taint namespace; with
// LabelNUMAType these keys are the tool's: pods find their partition by
// them, so a config may not set them (a user label replaced
// numa-partition.io/partition on every Node, silently).
const ownLabelPrefix = "numa-partition.io/"

// ownKeyProblem says why a label or taint key is not the user's to set,
// "" when it is. numa-type is the tool's as a label only: it sets no taint.
func ownKeyProblem(what, key string) string {
	switch {
	case strings.HasPrefix(key, ownLabelPrefix):
		return fmt.Sprintf("%s key %q is in numa-partition's own namespace %s (it labels every Node %s=<name>); choose another key", what, echo.Value(key), ownLabelPrefix, LabelPartition)
	case key == LabelNUMAType && what == "label":
		return fmt.Sprintf("label key %q is numa-partition's own (it labels every Node %s=<colour>, which pods select); choose another key", echo.Value(key), LabelNUMAType)
	}
	return ""
}

// ownLabels are the labels the tool puts on partition name's Node: its
// name, its colour and its host.
func ownLabels(name, color, hostname string) map[string]string {
	return map[string]string{LabelPartition: name, LabelNUMAType: color, LabelHost: hostname}
}

// OwnLabelsProblem says what is wrong with the tool's own labels and
// taints of a partition of a plan read from a file, "" when nothing:
// CheckPlanFile refuses a plan whose Node would carry another
// partition's name, colour or host, or a key of the tool's namespace the
// plan never sets (the planner refuses them in the config with
// ownKeyProblem). A plan
// made before the host label existed carries none, and is still read.
func OwnLabelsProblem(p *Partition, hostname string) string {
	want := ownLabels(p.Name, p.Color, hostname)
	for _, k := range sortedKeys(p.Labels) {
		if w, own := want[k]; own && p.Labels[k] != w {
			return fmt.Sprintf("partition %s: label %s=%s; numa-partition sets it to %q", p.Name, k, p.Labels[k], w)
		}
		if _, own := want[k]; !own && ownKeyProblem("label", k) != "" {
			return fmt.Sprintf("partition %s: %s", p.Name, ownKeyProblem("label", k))
		}
	}
	for _, t := range p.Taints {
		if msg := ownKeyProblem("taint", t.Key); msg != "" {
			return fmt.Sprintf("partition %s: %s", p.Name, msg)
		}
	}
	return ""
}

// Taint is one of a partition's taints, as kubelet registers its Node
// with it. A plan carries it checked (the planner parses the config's
// once); its JSON is kubelet's --register-with-taints form, parsed and
// checked again when a plan file is read.
type Taint struct{ Key, Value, Effect string }

// String is the "key[=value]:Effect" form.
func (t Taint) String() string {
	if t.Value == "" {
		return t.Key + ":" + t.Effect
	}
	return t.Key + "=" + t.Value + ":" + t.Effect
}

// MarshalJSON writes the String form.
func (t Taint) MarshalJSON() ([]byte, error) { return json.Marshal(t.String()) }

// UnmarshalJSON reads the String form, refusing what ParseTaint refuses.
func (t *Taint) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a taint is a string key[=value]:Effect: %w", err)
	}
	parsed, problems := ParseTaint(s)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	*t = parsed
	return nil
}

// taintStrings are ts in their String form.
func taintStrings(ts []Taint) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.String()
	}
	return out
}

// checkedTaints are the config's taints as the plan carries them; the
// validation refused every one ParseTaint finds a problem with.
func checkedTaints(specs ...[]string) []Taint {
	var out []Taint
	for _, list := range specs {
		for _, s := range list {
			t, _ := ParseTaint(s)
			out = append(out, t)
		}
	}
	return out
}

// ParseTaint reads "key[=value]:Effect", kubelet's --register-with-taints
// form, and says everything wrong with it: the one reader of a taint, for
// the planner's check and for kubeletgen.
func ParseTaint(t string) (Taint, []string) {
	kv, effect, ok := strings.Cut(t, ":")
	if !ok {
		return Taint{}, []string{fmt.Sprintf("taint %q has no effect (form: key[=value]:NoSchedule|PreferNoSchedule|NoExecute)", echo.Value(t))}
	}
	var problems []string
	switch effect {
	case "NoSchedule", "PreferNoSchedule", "NoExecute":
	default:
		problems = append(problems, fmt.Sprintf("taint %q: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", echo.Value(t), echo.Value(effect)))
	}
	key, value, _ := strings.Cut(kv, "=")
	for _, msg := range k8svalidation.IsQualifiedName(key) {
		problems = append(problems, fmt.Sprintf("taint %q: key: %s", echo.Value(t), msg))
	}
	if msg := ownKeyProblem("taint", key); msg != "" {
		problems = append(problems, fmt.Sprintf("taint %q: %s", echo.Value(t), msg))
	}
	for _, msg := range k8svalidation.IsValidLabelValue(value) {
		problems = append(problems, fmt.Sprintf("taint %q: value: %s", echo.Value(t), msg))
	}
	return Taint{Key: key, Value: value, Effect: effect}, problems
}

// checkTaint validates a taint (ParseTaint).
func checkTaint(t string) []string {
	_, problems := ParseTaint(t)
	return problems
}
