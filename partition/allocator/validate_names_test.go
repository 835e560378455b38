package allocator

import "testing"

// Pod names by Kubernetes' rules, and the NRI plugin's "<pod>/<container>"
// units (a container placed alone) by the same rules on each half.
func TestPodNamesProblemTakesContainerUnits(t *testing.T) {
	for name, ok := range map[string]bool{
		"web-0":                       true,
		"kube-proxy-jbxlw/kube-proxy": true,
		"a.b/c":                       true,
		"web/":                        false,
		"/c":                          false,
		"web/c/d":                     false,
		"web/C":                       false,
		"web/c\x1b[2J":                false,
		"Web/c":                       false,
	} {
		field, msg := PodNamesProblem("default", name)
		if (msg == "") != ok {
			t.Errorf("%q: %s %s, want accepted %v", name, field, msg, ok)
		}
		if !ok && field != "metadata.name" {
			t.Errorf("%q: field %q", name, field)
		}
	}
	if field, msg := PodNamesProblem("Bad", "web"); msg == "" || field != "metadata.namespace" {
		t.Errorf("namespace Bad: %q %q", field, msg)
	}
}
