package templates

import (
	"strings"
	"testing"
)

func TestEveryTemplateIsListed(t *testing.T) {
	names := strings.Join(Names(), " ")
	for _, want := range []string{"partition.slice.tmpl", "host.dropin.tmpl", "kubelet.service.tmpl", "containerd.service.tmpl",
		"containerd.toml.tmpl", "numa-allocator@.service.tmpl", "allocator.dropin.tmpl", "hugepages.service.tmpl"} {
		if !strings.Contains(names, want) {
			t.Errorf("template %s missing from %s", want, names)
		}
	}
}

func TestMissingValueIsAnError(t *testing.T) {
	// A template must never render "<no value>" into a unit.
	_, err := Execute("host.dropin.tmpl", map[string]string{"Section": "Slice"})
	if err == nil || !strings.Contains(err.Error(), "host.dropin.tmpl") {
		t.Fatalf("want an error naming the template, got %v", err)
	}
}

func TestUnknownTemplate(t *testing.T) {
	if _, err := Execute("nope.tmpl", nil); err == nil || !strings.Contains(err.Error(), "nope.tmpl") {
		t.Fatalf("want an error naming the template, got %v", err)
	}
}

func TestExecute(t *testing.T) {
	b, err := Execute("host.dropin.tmpl", map[string]string{"Section": "Scope", "AllowedCPUs": "0,4", "MemoryNodes": "0-1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[Scope]\n", "AllowedCPUs=0,4\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("missing %q in:\n%s", want, b)
		}
	}
	// The host's memory must stay unlocked: a writer confined to some
	// nodes cannot fill the other nodes' hugepage pools.
	if strings.Contains(string(b), "\nAllowedMemoryNodes=") {
		t.Errorf("host drop-in locks memory nodes:\n%s", b)
	}
}
