package planner

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/partition/planner/config"
	"k8s.io/apimachinery/pkg/util/validation"
)

// nameRe is the partition name rule: a systemd slice name part that
// kubelet's systemd cgroup driver does not split ('-' means nesting to
// systemd and kubelet maps '_' to '-'), which is also a DNS label so it can
// go into node names and paths, starting with a letter so that it never
// reads as a partition index ({index}, "0").
var nameRe = regexp.MustCompile(`^[a-z][a-z0-9]{0,31}$`)

// NameProblem says what is wrong with a partition name, or "". Plan
// checks names with it, and render the names of a plan read from a file.
func NameProblem(name string) string {
	switch {
	case name == "":
		return "partition name is empty"
	case strings.ContainsAny(name, "-_"):
		return fmt.Sprintf("partition name %q contains '-' or '_': systemd reads '-' as slice nesting and kubelet's systemd cgroup driver splits on it (allowed: 1-32 of a-z, 0-9, starting with a letter)", name)
	case !nameRe.MatchString(name):
		return fmt.Sprintf("partition name %q is not a valid slice name part (allowed: 1-32 of a-z, 0-9, starting with a letter)", name)
	case reservedSliceNames[name]:
		return fmt.Sprintf("partition name %q is taken by systemd or kubelet (%s.slice); choose another", name, name)
	}
	return ""
}

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

// checkLabel validates one node label with Kubernetes' own rules, plus
// the NodeRestriction rule kubelet enforces on --node-labels: keys in the
// kubernetes.io and k8s.io namespaces are refused unless allowed.
func checkLabel(key, value string) []string {
	var problems []string
	for _, msg := range validation.IsQualifiedName(key) {
		problems = append(problems, fmt.Sprintf("label key %q: %s", key, msg))
	}
	for _, msg := range validation.IsValidLabelValue(value) {
		problems = append(problems, fmt.Sprintf("label %q value %q: %s", key, value, msg))
	}
	if len(problems) == 0 && restrictedLabel(key) {
		problems = append(problems, fmt.Sprintf("label key %q is in a namespace kubelet may not set (kubernetes.io, k8s.io); allowed there are the kubelet.kubernetes.io/ and node.kubernetes.io/ prefixes and the well-known topology labels", key))
	}
	return problems
}

// NodeLabelsArg is kubelet's --node-labels argument for labels, "" for
// none. Render writes it and plan checks it with ArgProblem, so that a
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
		return fmt.Sprintf("%s key %q is in numa-partition's own namespace %s (it labels every Node %s=<name>); choose another key", what, key, ownLabelPrefix, LabelPartition)
	case key == LabelNUMAType && what == "label":
		return fmt.Sprintf("label key %q is numa-partition's own (it labels every Node %s=<colour>, which pods select); choose another key", key, LabelNUMAType)
	}
	return ""
}

// OwnLabelsProblem says what is wrong with the tool's own labels and
// taints of a partition of a plan read from a file, "" when nothing:
// render refuses a plan whose Node would carry another partition's name
// or colour, or a key of the tool's namespace the plan never sets (the
// planner refuses them in the config with ownKeyProblem).
func OwnLabelsProblem(p *Partition) string {
	want := map[string]string{LabelPartition: p.Name, LabelNUMAType: p.Color}
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

// kubeletAllowedLabels are the kubernetes.io labels kubelet may set on its
// own Node (k8s.io/kubelet/pkg/apis: KubeletLabels, KubeletLabelNamespaces).
var kubeletAllowedLabels = map[string]bool{
	"kubernetes.io/hostname":                   true,
	"kubernetes.io/arch":                       true,
	"kubernetes.io/os":                         true,
	"beta.kubernetes.io/arch":                  true,
	"beta.kubernetes.io/os":                    true,
	"beta.kubernetes.io/instance-type":         true,
	"node.kubernetes.io/instance-type":         true,
	"topology.kubernetes.io/region":            true,
	"topology.kubernetes.io/zone":              true,
	"failure-domain.beta.kubernetes.io/region": true,
	"failure-domain.beta.kubernetes.io/zone":   true,
}

func restrictedLabel(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	if prefix != "kubernetes.io" && prefix != "k8s.io" &&
		!strings.HasSuffix(prefix, ".kubernetes.io") && !strings.HasSuffix(prefix, ".k8s.io") {
		return false
	}
	if kubeletAllowedLabels[key] {
		return false
	}
	for _, ns := range []string{"kubelet.kubernetes.io", "node.kubernetes.io", "kubelet.k8s.io", "node.k8s.io"} {
		if prefix == ns || strings.HasSuffix(prefix, "."+ns) {
			return false
		}
	}
	return true
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
		return Taint{}, []string{fmt.Sprintf("taint %q has no effect (form: key[=value]:NoSchedule|PreferNoSchedule|NoExecute)", t)}
	}
	var problems []string
	switch effect {
	case "NoSchedule", "PreferNoSchedule", "NoExecute":
	default:
		problems = append(problems, fmt.Sprintf("taint %q: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", t, effect))
	}
	key, value, _ := strings.Cut(kv, "=")
	for _, msg := range validation.IsQualifiedName(key) {
		problems = append(problems, fmt.Sprintf("taint %q: key: %s", t, msg))
	}
	if msg := ownKeyProblem("taint", key); msg != "" {
		problems = append(problems, fmt.Sprintf("taint %q: %s", t, msg))
	}
	for _, msg := range validation.IsValidLabelValue(value) {
		problems = append(problems, fmt.Sprintf("taint %q: value: %s", t, msg))
	}
	return Taint{Key: key, Value: value, Effect: effect}, problems
}

// checkTaint validates a taint (ParseTaint).
func checkTaint(t string) []string {
	_, problems := ParseTaint(t)
	return problems
}
