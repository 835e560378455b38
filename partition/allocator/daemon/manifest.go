package daemon

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/numa-partition/numa-partition/numa/bitmask"
	"github.com/numa-partition/numa-partition/partition/allocator"
)

// Manifest kinds the daemon admits.
const (
	KindPod = "Pod"
	KindVMI = "VirtualMachineInstance"
)

// Manifest is a decoded admission request.
type Manifest struct {
	Kind string
	UID  types.UID
	Name string // namespace/name
	// Pod is set for KindPod.
	Pod *corev1.Pod
	// JSON is the manifest as canonical JSON (keys sorted): what AdmitVMI
	// reads, and what Digest is computed over.
	JSON []byte
	// Digest identifies the manifest's content independent of its
	// formatting (YAML or JSON, key order), so a retried admission is
	// recognised as the same request.
	Digest string
	// Hints are other providers' hints for the decision (the NRI
	// plugin's CPU hints); none for the API's admissions.
	Hints allocator.Hints
	// Placed, when set, says where each container already runs: the pod
	// is adopted there (allocator.Adopt) instead of decided.
	Placed map[string]bitmask.NodeSet
}

// manifestDigest is Manifest.Digest of a manifest's canonical JSON.
func manifestDigest(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

// FieldError is a malformed manifest: Field is the JSON path of the wrong
// field ("" when the document itself is wrong).
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// DecodeManifest reads one Pod or KubeVirt VirtualMachineInstance manifest,
// YAML or JSON. Decoding is strict, as kubectl's server-side field
// validation: unknown and duplicate fields, wrong types and malformed
// quantities are errors naming the field.
func DecodeManifest(data []byte) (Manifest, error) {
	raw, doc, err := decodeDocument(data)
	if err != nil {
		return Manifest{}, err
	}
	canonical, err := json.Marshal(doc) // map keys come out sorted
	if err != nil {
		return Manifest{}, fmt.Errorf("re-encoding manifest: %w", err)
	}
	m := Manifest{JSON: canonical, Digest: manifestDigest(canonical)}
	if m.Kind, err = manifestKind(doc); err != nil {
		return Manifest{}, err
	}
	if m.UID, m.Name, err = manifestIdentity(doc); err != nil {
		return Manifest{}, err
	}
	if err := checkQuantities(doc, quantityFields(m.Kind)); err != nil {
		return Manifest{}, err
	}
	if m.Kind == KindVMI {
		return m, nil // the allocator computes the virt-launcher pod
	}
	if m.Pod, err = admissiblePod(raw); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// decodeDocument reads data as one YAML or JSON object: raw is its JSON,
// doc the object, for the checks that name a field before a Pod is
// decoded.
func decodeDocument(data []byte) (raw []byte, doc map[string]any, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, &FieldError{Msg: "empty manifest: expected one Pod or VirtualMachineInstance (YAML or JSON)"}
	}
	if hasSecondYAMLDocument(data) {
		return nil, nil, &FieldError{Msg: "more than one YAML document: admit one Pod or VirtualMachineInstance per request"}
	}
	// Strict: a key given twice is an error, not "the last one wins".
	raw, err = yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, nil, &FieldError{Msg: fmt.Sprintf("not valid YAML or JSON: %v", err)}
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc == nil {
		return nil, nil, &FieldError{Msg: "manifest must be an object with apiVersion, kind, metadata and spec"}
	}
	return raw, doc, nil
}

// manifestKind is the manifest's kind, one the daemon admits, with the
// apiVersion that kind is.
func manifestKind(doc map[string]any) (string, error) {
	kind, _ := doc["kind"].(string)
	apiVersion, _ := doc["apiVersion"].(string)
	switch kind {
	case KindPod:
		if apiVersion != "v1" {
			return "", &FieldError{Field: "apiVersion", Msg: fmt.Sprintf("%q: a Pod is apiVersion v1", apiVersion)}
		}
	case KindVMI:
		if apiVersion != "kubevirt.io/v1" && apiVersion != "kubevirt.io/v1alpha3" {
			return "", &FieldError{Field: "apiVersion", Msg: fmt.Sprintf("%q: a VirtualMachineInstance is apiVersion kubevirt.io/v1", apiVersion)}
		}
	case "":
		return "", &FieldError{Field: "kind", Msg: "missing: allowed are Pod, VirtualMachineInstance"}
	default:
		return "", &FieldError{Field: "kind", Msg: fmt.Sprintf("%q: allowed are Pod, VirtualMachineInstance", kind)}
	}
	return kind, nil
}

// manifestIdentity is the manifest's UID and namespace/name, checked:
// the allocator keys its state by the UID and names the pod in its
// answers, logs and paths.
func manifestIdentity(doc map[string]any) (types.UID, string, error) {
	meta, ok := doc["metadata"].(map[string]any)
	if !ok {
		return "", "", &FieldError{Field: "metadata", Msg: "missing or not an object"}
	}
	var uid, name, ns string
	for _, f := range []struct {
		key string
		to  *string
	}{{"uid", &uid}, {"name", &name}, {"namespace", &ns}} {
		if err := metaString(meta, f.key, f.to); err != nil {
			return "", "", err
		}
	}
	if strings.TrimSpace(uid) == "" {
		return "", "", &FieldError{Field: "metadata.uid", Msg: "missing: the allocator keys every allocation by pod UID"}
	}
	if msg := UIDProblem(types.UID(uid)); msg != "" {
		return "", "", &FieldError{Field: "metadata.uid", Msg: fmt.Sprintf("%q %s", uid, msg)}
	}
	if name == "" {
		return "", "", &FieldError{Field: "metadata.name", Msg: "missing"}
	}
	// The names are refused here with control characters and all that
	// Kubernetes refuses, for a VMI too (its launcher pod's are derived).
	if f, msg := allocator.PodNamesProblem(ns, name); msg != "" {
		return "", "", &FieldError{Field: f, Msg: msg}
	}
	if ns == "" {
		ns = "default"
	}
	return types.UID(uid), ns + "/" + name, nil
}

// admissiblePod decodes the Pod and holds it to the allocator's one gate
// here, to answer with the field before the admission waits for the
// decision mutex; the admission checks again.
func admissiblePod(raw []byte) (*corev1.Pod, error) {
	pod, err := decodePod(raw)
	if err != nil {
		return nil, err
	}
	if err := allocator.CheckPod(pod); err != nil {
		return nil, asFieldError(err)
	}
	return pod, nil
}

// metaString sets *to to metadata's key when it is a string; a value of
// another type is an error saying so (#38: metadata.uid: 12345 was
// reported "missing"), an absent one leaves *to empty.
func metaString(meta map[string]any, key string, to *string) error {
	v, present := meta[key]
	if !present || v == nil {
		return nil
	}
	s, ok := v.(string)
	if !ok {
		return &FieldError{Field: "metadata." + key, Msg: fmt.Sprintf("%s is not allowed here, expected string", jsonKind(v))}
	}
	*to = s
	return nil
}

// jsonKind names a decoded JSON value's type as encoding/json does.
func jsonKind(v any) string {
	switch v.(type) {
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "string"
}

// MaxContainersPerPod bounds one admission: allocator.CheckPod's.
const MaxContainersPerPod = allocator.MaxContainersPerPod

// uidRe is what a Kubernetes UID looks like: the API server makes them
// UUIDs; letters, digits, '-', '_' and '.' cover those and hand-made ones.
var uidRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// UIDProblem says what is wrong with a pod UID given to the API, "" when
// nothing: it keys the state and appears in paths and logs.
func UIDProblem(uid types.UID) string {
	switch s := string(uid); {
	case len(s) > 128:
		return fmt.Sprintf("is %d characters long; a pod UID has at most 128", len(s))
	case s == "." || s == ".." || !uidRe.MatchString(s):
		return "is not a pod UID (letters, digits, '-', '_' and '.', like 3c9e9a5e-7f0a-4c1b-9d2e-1a2b3c4d5e6f)"
	}
	return ""
}

// decodePod decodes strictly and case-sensitively, as the API server does.
func decodePod(raw []byte) (*corev1.Pod, error) {
	var pod corev1.Pod
	strict, err := sjson.UnmarshalStrict(raw, &pod)
	if err != nil {
		// sigs.k8s.io/json's type errors are internal types; the standard
		// library reports the same error with an exported field path.
		var typeErr *json.UnmarshalTypeError
		if stdErr := json.Unmarshal(raw, &corev1.Pod{}); errors.As(stdErr, &typeErr) {
			return nil, &FieldError{Field: typeErr.Field, Msg: fmt.Sprintf("%s is not allowed here, expected %s", typeErr.Value, typeErr.Type)}
		}
		return nil, &FieldError{Msg: fmt.Sprintf("not a valid Pod: %v", err)}
	}
	if len(strict) > 0 {
		var fe sjson.FieldError
		if errors.As(strict[0], &fe) {
			return nil, &FieldError{Field: fe.FieldPath(), Msg: strictMessage(strict[0])}
		}
		return nil, &FieldError{Msg: strict[0].Error()}
	}
	return &pod, nil
}

func strictMessage(err error) string {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "unknown field"):
		return "unknown field (a typo? field names are case-sensitive)"
	case strings.HasPrefix(msg, "duplicate field"):
		return "duplicate field"
	}
	return msg
}

// quantityFields lists, per kind, the paths whose values are Kubernetes
// quantities. "[]" walks a list, "*" every key of a map.
func quantityFields(kind string) [][]string {
	if kind == KindVMI {
		return [][]string{
			{"spec", "domain", "resources", "requests", "*"},
			{"spec", "domain", "resources", "limits", "*"},
			{"spec", "domain", "memory", "guest"},
			{"spec", "domain", "memory", "hugepages", "pageSize"},
		}
	}
	var paths [][]string
	for _, list := range []string{"containers", "initContainers"} {
		for _, kind := range []string{"limits", "requests"} {
			paths = append(paths, []string{"spec", list, "[]", "resources", kind, "*"})
		}
	}
	return append(paths,
		[]string{"spec", "overhead", "*"},
		[]string{"spec", "resources", "limits", "*"},
		[]string{"spec", "resources", "requests", "*"},
	)
}

// checkQuantities parses every quantity at paths, so that "1Gb" is reported
// as spec.containers[0].resources.limits.memory rather than as a decoding
// error without a location.
func checkQuantities(doc map[string]any, paths [][]string) error {
	for _, p := range paths {
		if err := walkQuantities(doc, p, ""); err != nil {
			return err
		}
	}
	return nil
}

func walkQuantities(v any, path []string, at string) error {
	if len(path) == 0 {
		switch q := v.(type) {
		case string:
			if _, err := resource.ParseQuantity(q); err != nil {
				return &FieldError{Field: at, Msg: fmt.Sprintf("%q is not a quantity (e.g. 512Mi, 2Gi, 1.5)", q)}
			}
		case float64:
		default:
			return &FieldError{Field: at, Msg: "must be a quantity string (e.g. 512Mi, 2Gi)"}
		}
		return nil
	}
	join := func(k string) string {
		if at == "" {
			return k
		}
		return at + "." + k
	}
	switch step := path[0]; step {
	case "[]":
		list, ok := v.([]any)
		if !ok {
			return &FieldError{Field: at, Msg: "must be a list"}
		}
		for i, item := range list {
			if err := walkQuantities(item, path[1:], fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case "*":
		obj, ok := v.(map[string]any)
		if !ok {
			return &FieldError{Field: at, Msg: "must be a map of resource name to quantity"}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := walkQuantities(obj[k], path[1:], join(k)); err != nil {
				return err
			}
		}
	default:
		obj, ok := v.(map[string]any)
		if !ok {
			return &FieldError{Field: at, Msg: "must be an object"}
		}
		child, present := obj[step]
		if !present || child == nil {
			return nil
		}
		return walkQuantities(child, path[1:], join(step))
	}
	return nil
}

// hasSecondYAMLDocument reports a "---" separator followed by content.
// YAMLToJSON would silently read only the first document.
func hasSecondYAMLDocument(data []byte) bool {
	lines := strings.Split(string(data), "\n")
	seenContent := false
	for i, line := range lines {
		t := strings.TrimRight(line, " \t\r")
		if strings.HasPrefix(t, "---") && (len(t) == 3 || t[3] == ' ') {
			if !seenContent {
				continue // a leading separator is fine
			}
			for _, rest := range lines[i+1:] {
				r := strings.TrimSpace(rest)
				if r != "" && !strings.HasPrefix(r, "#") && r != "..." && r != "---" {
					return true
				}
			}
			return false
		}
		if s := strings.TrimSpace(t); s != "" && !strings.HasPrefix(s, "#") {
			seenContent = true
		}
	}
	return false
}

// NodeSelector is the manifest's spec.nodeSelector (Pods and VMIs spell it
// the same way).
func (m Manifest) NodeSelector() map[string]string {
	var doc struct {
		Spec struct {
			NodeSelector map[string]string `json:"nodeSelector"`
		} `json:"spec"`
	}
	if json.Unmarshal(m.JSON, &doc) != nil {
		return nil
	}
	return doc.Spec.NodeSelector
}
