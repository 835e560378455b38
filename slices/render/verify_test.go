package render

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/slices/bundle"
)

// execLine finds the program of every Exec*= setting, after systemd's
// prefixes (+ - @ ! :).
var execLine = regexp.MustCompile(`(?m)^Exec[A-Za-z]*=[-+@!:]*(/[^\s']+)`)

// verifyRoot writes b to a scratch root laid out for `systemd-analyze
// verify --root`: the distribution's unit tree (for sysinit.target and
// friends) and an executable stub for every program the units run, since
// kubelet or containerd are not installed where tests run. It returns the
// root and the unit names to verify.
func verifyRoot(t *testing.T, b bundle.Bundle) (string, []string) {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "lib", "systemd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", "/lib/systemd/system", filepath.Join(root, "lib", "systemd")).CombinedOutput(); err != nil {
		t.Fatalf("copying /lib/systemd/system: %v: %s", err, out)
	}
	var units []string
	for _, f := range b.Files {
		full := filepath.Join(root, f.Path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, f.Content, f.Mode); err != nil {
			t.Fatal(err)
		}
		for _, m := range execLine.FindAllSubmatch(f.Content, -1) {
			stub := filepath.Join(root, string(m[1]))
			if err := os.MkdirAll(filepath.Dir(stub), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(stub, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, u := range b.Units {
		if u.Name != "init.scope" {
			units = append(units, u.Name)
			continue
		}
		// init.scope has no unit file to load: check its drop-in's
		// resource-control keys, which slices share, as a slice's.
		dropIn, err := os.ReadFile(filepath.Join(root, dropInPath("init.scope")))
		if err != nil {
			t.Fatal(err)
		}
		asSlice := bytes.Replace(dropIn, []byte("[Scope]"), []byte("[Slice]"), 1)
		if err := os.WriteFile(filepath.Join(root, unitPath("verify-init-scope.slice")), asSlice, 0o644); err != nil {
			t.Fatal(err)
		}
		units = append(units, "verify-init-scope.slice")
	}
	units = append(units, AllocatorTemplate)
	return root, units
}

// analyze runs systemd-analyze verify and returns everything it printed.
// Unknown keys and bad values are only warnings (exit status 0), so any
// output at all is a failure.
func analyze(t *testing.T, root string, units []string) (string, error) {
	t.Helper()
	cmd := exec.Command("systemd-analyze", append([]string{"verify", "--root=" + root}, units...)...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func needAnalyze(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("SKIPPED LOUDLY: systemd-analyze is not installed, so the rendered units were NOT verified; install systemd (apt-get install systemd), as .ci/run does")
	}
}

// TestSystemdAnalyzeVerify: every rendered unit and drop-in of every
// example passes `systemd-analyze verify` without a single line of output.
func TestSystemdAnalyzeVerify(t *testing.T) {
	needAnalyze(t)
	for _, e := range examples {
		t.Run(e.name, func(t *testing.T) {
			_, _, b := e.render(t)
			root, units := verifyRoot(t, b)
			out, err := analyze(t, root, units)
			if err != nil || out != "" {
				t.Fatalf("systemd-analyze verify %s: %v\n%s", strings.Join(units, " "), err, out)
			}
		})
	}
}

// TestSystemdAnalyzeVerifyCatchesMistakes proves the check above can fail:
// a misspelt key in a drop-in and a bad value in a slice both produce
// output although the exit status stays 0.
func TestSystemdAnalyzeVerifyCatchesMistakes(t *testing.T) {
	needAnalyze(t)
	_, _, b := examples[0].render(t)
	for _, c := range []struct{ path, from, to string }{
		{dropInPath("system.slice"), "\nAllowedCPUs=", "\nAllowedCPUZ="},
		{unitPath("node0.slice"), "\nAllowedMemoryNodes=0", "\nAllowedMemoryNodes=banana"},
		{dropInPath("init.scope"), "\nAllowedCPUs=", "\nAllowedCPUZ="},
		{dropInPath(allocatorUnit("node1")), "\nNUMAPolicy=bind", "\nNUMAPolicy=glue"},
		{unitPath(kubeletUnit("node0")), "\nRestart=always", "\nRestart=sometimes"},
	} {
		t.Run(c.path, func(t *testing.T) {
			broken := b
			broken.Files = append([]bundle.File(nil), b.Files...)
			found := false
			for i, f := range broken.Files {
				if f.Path == c.path && bytes.Contains(f.Content, []byte(c.from)) {
					broken.Files[i].Content = bytes.Replace(f.Content, []byte(c.from), []byte(c.to), 1)
					found = true
				}
			}
			if !found {
				t.Fatalf("%s has no %q to break", c.path, c.from)
			}
			root, units := verifyRoot(t, broken)
			out, _ := analyze(t, root, units)
			if out == "" {
				t.Fatalf("systemd-analyze verify printed nothing for %s with %s", c.path, c.to)
			}
		})
	}
}
