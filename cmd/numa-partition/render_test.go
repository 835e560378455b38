package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/slices/bundle"
)

func TestWriteTree(t *testing.T) {
	b := bundle.Bundle{
		Files: []bundle.File{
			{Path: "etc/systemd/system/node0.slice", Mode: 0o644, Content: []byte("[Slice]\n")},
			{Path: "etc/numa-partition/kubelet-node0.yaml", Mode: 0o644, Content: []byte("kind: KubeletConfiguration\n")},
		},
		Units:         []bundle.Unit{{Name: "node0.slice", Start: true}, {Name: "kubelet-node0.service", Enable: true, Start: true}},
		KernelCmdline: "hugepagesz=2M hugepages=0:512",
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := writeTree(dir, b); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "etc/systemd/system/node0.slice"))
	if err != nil || string(got) != "[Slice]\n" {
		t.Fatalf("node0.slice: %q, %v", got, err)
	}
	// A second render into the same directory is refused: stale files
	// would mix in.
	if err := writeTree(dir, b); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("want a not-empty error, got %v", err)
	}
	var out bytes.Buffer
	if err := writeRenderSummary(&out, dir, b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Wrote 2 files below " + dir, "/etc/systemd/system/node0.slice", "kubelet-node0.service", "enable + start", "hugepagesz=2M hugepages=0:512"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}
