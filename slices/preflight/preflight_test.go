package preflight

import (
	"errors"
	"strings"
	"testing"
)

// fake is a check with fixed results.
type fake struct {
	name, part  string
	warns, errs []error
}

func (f fake) Name() string                    { return f.name }
func (f fake) Partition() string               { return f.part }
func (f fake) Check() (warnings, errs []error) { return f.warns, f.errs }

func TestRunAndIgnore(t *testing.T) {
	checks := []Check{
		fake{name: NameKubeletBinary, part: "node0", errs: []error{errors.New("no kubelet")}},
		fake{name: NameSwap, part: "node0", warns: []error{errors.New("swap on")}},
		fake{name: NamePort, errs: []error{errors.New("port taken")}},
		fake{name: NameClientCA, part: "node0"},
	}
	rep := Run(checks, Ignore{})
	var got []Status
	for _, r := range rep.Results {
		got = append(got, r.Status)
	}
	if strings.Join(statusStrings(got), ",") != "error,warning,error,pass" {
		t.Errorf("statuses %v", got)
	}
	err := rep.Err()
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("want an *Error, got %v", err)
	}
	contains(t, err.Error(), "2 errors", "[ERROR KubeletBinary]: no kubelet", "[ERROR Port]: port taken", "--ignore-preflight-errors=KubeletBinary,Port")
	if w := rep.Warnings(); len(w) != 1 || w[0] != "preflight [WARNING Swap]: swap on" {
		t.Errorf("warnings %q", w)
	}

	ig, err := ParseIgnore([]string{"kubeletbinary", " Port "})
	if err != nil {
		t.Fatal(err)
	}
	rep = Run(checks, ig)
	if rep.Err() != nil || !rep.Results[0].Ignored || rep.Results[0].Status != StatusWarning || rep.Results[0].Warnings[0] != "no kubelet" {
		t.Errorf("ignored: %v %+v", rep.Err(), rep.Results[0])
	}
	ig, _ = ParseIgnore([]string{"Swap,all"})
	if rep := Run(checks, ig); rep.Err() != nil {
		t.Errorf("all: %v", rep.Err())
	}
	if _, err := ParseIgnore([]string{"KubeletBinary,Nope"}); err == nil || !strings.Contains(err.Error(), "Nope: no such check") {
		t.Errorf("an unknown check: %v", err)
	}
}

func statusStrings(s []Status) []string {
	var out []string
	for _, x := range s {
		out = append(out, string(x))
	}
	return out
}
