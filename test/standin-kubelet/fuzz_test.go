package main

import (
	"os"
	"strings"
	"testing"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

// FuzzConfig: any bytes either fail to decode or validate to an error or
// nil — never a panic (a stand-in that crashes would hide what the
// rendered config got wrong).
func FuzzConfig(f *testing.F) {
	valid, err := os.ReadFile("testdata/valid.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmemoryManagerPolicy: Static\nreservedMemory: [{numaNode: 0, limits: {memory: -1}}]\n"))
	f.Add([]byte("evictionHard: {memory.available: 1e400}\nkubeReserved: {hugepages-2Mi: x}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var cfg kubeletv1beta1.KubeletConfiguration
		if yaml.UnmarshalStrict(data, &cfg) != nil {
			return
		}
		_ = validateConfig(&cfg)
	})
}

// FuzzFlags: flag parsing never panics, and a successful parse always has
// --config.
func FuzzFlags(f *testing.F) {
	f.Add("--config=/a --root-dir /b -v=2 --node-labels")
	f.Add("--config")
	f.Fuzz(func(t *testing.T, line string) {
		fl, err := parseFlags(strings.Fields(line))
		if err == nil && fl.Config == "" {
			t.Fatalf("parsed %q without --config", line)
		}
	})
}
