package validation

import (
	"fmt"
	"strings"

	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/numa-partition/numa-partition/internal/echo"
)

// LabelProblems validates one node label with Kubernetes' own rules, plus
// the NodeRestriction rule kubelet enforces on --node-labels: keys in the
// kubernetes.io and k8s.io namespaces are refused unless allowed.
func LabelProblems(key, value string) []string {
	var problems []string
	for _, msg := range k8svalidation.IsQualifiedName(key) {
		problems = append(problems, fmt.Sprintf("label key %q: %s", echo.Value(key), msg))
	}
	for _, msg := range k8svalidation.IsValidLabelValue(value) {
		problems = append(problems, fmt.Sprintf("label %q value %q: %s", echo.Value(key), echo.Value(value), msg))
	}
	if len(problems) == 0 && restrictedLabel(key) {
		problems = append(problems, fmt.Sprintf("label key %q is in a namespace kubelet may not set (kubernetes.io, k8s.io); allowed there are the kubelet.kubernetes.io/ and node.kubernetes.io/ prefixes and the well-known topology labels", echo.Value(key)))
	}
	return problems
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
