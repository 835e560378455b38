package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/partition/allocator"
	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
)

// Issue 38 item 7: names a daemon answered with ESC, CR, LF and BEL were
// printed raw by allocations, admit and simulate (screen cleared, fake
// rows). Every table cell of such text goes through shown: quoted when
// it holds anything but printable characters, itself otherwise.
func TestTablesEscapeControlCharacters_Issue38Item7(t *testing.T) {
	for in, want := range map[string]string{
		"prod/web":        "prod/web",
		"a b":             "a b",
		"\x1b[2Jx":        `"\x1b[2Jx"`,
		"a\r\nnode0\tb":   `"a\r\nnode0\tb"`,
		"bell\a":          `"bell\a"`,
		"rtl\u202eevil":   `"rtl\u202eevil"`,
		"bad\xffutf8":     `"bad\xffutf8"`,
		"ünïcödé-is-fine": "ünïcödé-is-fine",
	} {
		if got := shown(in); got != want {
			t.Errorf("shown(%q) = %s, want %s", in, got, want)
		}
	}
	evil := "x\x1b[2J\rnode1  prod/fake"
	d := allocator.Decision{Pod: evil, PodUID: "u\n", Admitted: true, Pinned: true, Reason: "r\a",
		Containers: []allocator.ContainerDecision{{Name: "c\x1b"}}}
	var out, errOut bytes.Buffer
	lists := []daemonapi.AllocationsResponse{{Partition: "node0\x1b", Allocations: []allocator.Allocation{d}}}
	if err := writeAllocations(&out, &errOut, lists, 0); err != nil {
		t.Fatal(err)
	}
	allocPrintDecision(&out, daemonapi.AdmitResponse{Kind: "Pod", Partition: "p\r", Decision: d})
	if err := writeAllocations(&out, &errOut, []daemonapi.AllocationsResponse{{Partition: "n\x1b"}}, 0); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{out.String(), errOut.String()} {
		if strings.ContainsAny(text, "\x1b\r\a") {
			t.Errorf("control characters printed:\n%q", text)
		}
	}
	if !strings.Contains(out.String(), `"x\x1b[2J\rnode1  prod/fake"`) || !strings.Contains(errOut.String(), `"n\x1b"`) {
		t.Errorf("names not quoted:\n%s\n%s", out.String(), errOut.String())
	}
}
