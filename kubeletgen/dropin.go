package kubeletgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/numa-partition/numa-partition/partition/planner"
)

// DropIn writes one of the user's drop-ins as kubelet reads a file of
// its --config-dir: a KubeletConfiguration document (kubelet refuses one
// without apiVersion and kind) holding only the user's fields, which
// kubelet merges over the rendered file. The planner refused every field
// this package sets (validation.DropInProblems), so none is overridden.
func DropIn(partitionName string, d planner.KubeletDropIn) ([]byte, error) {
	doc := maps.Clone(d.Settings)
	if doc == nil {
		doc = map[string]any{}
	}
	doc["apiVersion"] = kubeletv1beta1.SchemeGroupVersion.String()
	doc["kind"] = "KubeletConfiguration"
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encoding kubelet drop-in %s of %s: %w", d.File, partitionName, err)
	}
	body, err := yaml.JSONToYAML(raw)
	if err != nil {
		return nil, fmt.Errorf("encoding kubelet drop-in %s of %s: %w", d.File, partitionName, err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# KubeletConfiguration drop-in of numa-partition %s from the config's %s;\n", partitionName, dropInSource(d.File))
	b.WriteString("# `numa-partition apply` overwrites this file. kubelet merges it over\n")
	b.WriteString("# its --config file (docs/config.md, \"KubeletConfiguration drop-ins\").\n")
	b.Write(body)
	return b.Bytes(), nil
}

// dropInSource names the config table a drop-in file comes from.
func dropInSource(file string) string {
	if file == planner.PartitionDropInFile {
		return "[[partition]] drop_in"
	}
	return "[kubelet] drop_in"
}
