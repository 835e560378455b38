package daemon

import (
	"errors"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/partition/allocator"
)

const goodPodYAML = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: prod
  uid: 7d0b1c5e-0000-4000-8000-000000000001
spec:
  containers:
  - name: app
    image: nginx
    resources:
      limits: {cpu: "2", memory: 1Gi, hugepages-2Mi: 512Mi}
      requests: {cpu: "2", memory: 1Gi, hugepages-2Mi: 512Mi}
`

func TestDecodeManifestPod(t *testing.T) {
	m, err := DecodeManifest([]byte(goodPodYAML))
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != KindPod || m.UID != "7d0b1c5e-0000-4000-8000-000000000001" || m.Name != "prod/web" {
		t.Fatalf("got kind %q uid %q name %q", m.Kind, m.UID, m.Name)
	}
	if got := m.Pod.Spec.Containers[0].Resources.Limits.Memory().String(); got != "1Gi" {
		t.Fatalf("memory limit %s, want 1Gi", got)
	}
	// The same pod as JSON with another key order has the same digest: a
	// retry through another client is recognised.
	asJSON := `{"spec":{"containers":[{"resources":{"requests":{"memory":"1Gi","cpu":"2","hugepages-2Mi":"512Mi"},"limits":{"hugepages-2Mi":"512Mi","memory":"1Gi","cpu":"2"}},"name":"app","image":"nginx"}]},
	  "metadata":{"uid":"7d0b1c5e-0000-4000-8000-000000000001","namespace":"prod","name":"web"},"kind":"Pod","apiVersion":"v1"}`
	j, err := DecodeManifest([]byte(asJSON))
	if err != nil {
		t.Fatal(err)
	}
	if j.Digest != m.Digest {
		t.Fatalf("digest of the JSON form %s differs from the YAML form %s", j.Digest, m.Digest)
	}
	other, err := DecodeManifest([]byte(strings.Replace(goodPodYAML, "memory: 1Gi,", "memory: 2Gi,", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if other.Digest == m.Digest {
		t.Fatal("a different manifest has the same digest")
	}
}

func TestDecodeManifestVMI(t *testing.T) {
	m, err := DecodeManifest([]byte(`apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: vm1, uid: vmi-1}
spec:
  domain:
    cpu: {cores: 2, dedicatedCpuPlacement: true}
    memory: {guest: 4Gi, hugepages: {pageSize: 1Gi}}
    resources: {requests: {memory: 4Gi}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != KindVMI || m.Pod != nil || m.Name != "default/vm1" || m.UID != "vmi-1" {
		t.Fatalf("got %+v", m)
	}
}

func TestDecodeManifestErrorsNameTheField(t *testing.T) {
	pod := func(old, new string) string {
		if !strings.Contains(goodPodYAML, old) {
			t.Fatalf("test bug: %q not in the pod", old)
		}
		return strings.Replace(goodPodYAML, old, new, 1)
	}
	tests := []struct {
		name, manifest, field, msg string
	}{
		{"empty", "  \n", "", "empty manifest"},
		{"not yaml", "kind: [Pod", "", "not valid YAML or JSON"},
		{"scalar", "42", "", "must be an object"},
		{"two documents", goodPodYAML + "---\n" + goodPodYAML, "", "more than one YAML document"},
		{"no kind", pod("kind: Pod\n", ""), "kind", "missing"},
		{"wrong kind", pod("kind: Pod", "kind: Deployment"), "kind", `"Deployment"`},
		{"wrong apiVersion", pod("apiVersion: v1", "apiVersion: apps/v1"), "apiVersion", "apiVersion v1"},
		{"no uid", pod("  uid: 7d0b1c5e-0000-4000-8000-000000000001\n", ""), "metadata.uid", "missing"},
		{"no name", pod("  name: web\n", ""), "metadata.name", "missing"},
		{"bad limit", pod("limits: {cpu: \"2\", memory: 1Gi", "limits: {cpu: \"2\", memory: 1Gb"), "spec.containers[0].resources.limits.memory", `"1Gb" is not a quantity`},
		{"bad request", pod("requests: {cpu: \"2\"", "requests: {cpu: two"), "spec.containers[0].resources.requests.cpu", "not a quantity"},
		{"quantity as list", pod("hugepages-2Mi: 512Mi}\n      requests", "hugepages-2Mi: [1]}\n      requests"), "spec.containers[0].resources.limits.hugepages-2Mi", "must be a quantity"},
		{"containers not a list", "apiVersion: v1\nkind: Pod\nmetadata: {name: a, uid: u}\nspec: {containers: {name: x}}\n", "spec.containers", "must be a list"},
		{"unknown field", pod("resources:", "resource:"), "spec.containers[0].resource", "unknown field"},
		{"case matters", pod("image: nginx", "Image: nginx"), "spec.containers[0].Image", "unknown field"},
		{"wrong type", pod("image: nginx", "image: [nginx]"), "spec.containers.image", "expected string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeManifest([]byte(tt.manifest))
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v (%T), want a FieldError", err, err)
			}
			if fe.Field != tt.field || !strings.Contains(fe.Msg, tt.msg) {
				t.Fatalf("got field %q msg %q, want field %q msg containing %q", fe.Field, fe.Msg, tt.field, tt.msg)
			}
		})
	}
}

// FuzzDecodeManifest: whatever DecodeManifest accepts is complete, passes
// the allocator's one gate, and an admission of it is decided (admitted
// or rejected) without the gate refusing what decoding let through.
func FuzzDecodeManifest(f *testing.F) {
	f.Add([]byte(goodPodYAML))
	// #38: names Kubernetes refuses, a uid of another type.
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a\u001b[2J","namespace":"n\r","uid":"u"},"spec":{"containers":[{"name":"c\u0007"}]}}`))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","uid":12345},"spec":{"containers":[{"name":"c"}]}}`))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","uid":"u"},"spec":{"containers":[{"name":"c"}]}}`))
	f.Add([]byte("kind: VirtualMachineInstance\napiVersion: kubevirt.io/v1\nmetadata: {name: a, uid: b}\n"))
	f.Add([]byte("kind: VirtualMachineInstance\napiVersion: kubevirt.io/v1\nmetadata: {name: a, uid: b}\nspec: {domain: {cpu: {cores: 4194304, sockets: 2097152, threads: 2097152, dedicatedCpuPlacement: true}, resources: {requests: {memory: 1Gi}}}}\n"))
	for _, c := range hostileManifests {
		f.Add([]byte(c.manifest))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeManifest(data)
		if err != nil {
			return
		}
		if m.UID == "" || m.Name == "" || (m.Kind == KindPod) != (m.Pod != nil) || len(m.Digest) != 64 {
			t.Fatalf("accepted an incomplete manifest: %+v", m)
		}
		if m.Kind != KindPod {
			return
		}
		if err := allocator.CheckPod(m.Pod); err != nil {
			t.Fatalf("accepted a pod the allocator's gate refuses: %v", err)
		}
		a, err := allocator.New(smallConfig())
		if err != nil {
			t.Fatal(err)
		}
		var pe *allocator.PodError
		if _, err := a.Admit(m.Pod); errors.As(err, &pe) {
			t.Fatalf("the admission refused what decoding accepted: %v", err)
		}
	})
}

// Issue 38 items 7 and 9: any member of the socket group could admit a
// pod, namespace or container named with ESC, CR, LF or BEL, which the
// CLI then printed; and metadata.uid: 12345 was reported "missing".
// Names follow Kubernetes' own rules (namespace a DNS-1123 label, pod a
// DNS-1123 subdomain, container a DNS-1123 label); a wrong type says so.
func TestDecodeManifestRefusesNamesKubernetesRefuses_Issue38(t *testing.T) {
	for edit, want := range map[[2]string]string{
		{"name: web", "name: \"web\\e[2J\""}:             `metadata.name: "web\x1b[2J" is not a pod name: at most 253 of lowercase letters`,
		{"namespace: prod", "namespace: \"prod\\r\\n\""}: `metadata.namespace: "prod\r\n" is not a namespace name: at most 63 of lowercase letters`,
		{"name: web", "name: Web"}:                       `metadata.name: "Web" is not a pod name`,
		{"uid: ", "uid: 12345 #"}:                        `metadata.uid: number is not allowed here, expected string`,
		{"name: web", "name: [web]"}:                     `metadata.name: array is not allowed here, expected string`,
	} {
		fixtureHas(t, strings.Contains(goodPodYAML, edit[0]), edit[0])
		_, err := DecodeManifest([]byte(strings.Replace(goodPodYAML, edit[0], edit[1], 1)))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: got %v, want %s…", edit[1], err, want)
		}
	}
	pod := strings.Replace(goodPodYAML, "- name: app", "- name: \"c\\a\"", 1)
	if _, err := DecodeManifest([]byte(pod)); err == nil || !strings.Contains(err.Error(), `"c\a" is not a container name`) {
		t.Errorf("container name with BEL: %v", err)
	}
}

func fixtureHas(t *testing.T, ok bool, what string) {
	t.Helper()
	if !ok {
		t.Fatalf("fixture lacks %s", what)
	}
}
