package apply

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/numa/numatest"
	"github.com/numa-partition/numa-partition/slices/apply/internal/applytest"
	"github.com/numa-partition/numa-partition/slices/preflight"
	"github.com/numa-partition/numa-partition/slices/systemd"
)

// On a root without kubelet, containerd, CA or kubeconfig, apply is
// refused by the preflight before it changes anything (not even the lock
// file is made), naming each check; a dry run lists the same errors and
// goes on.
func TestApplyRefusedByPreflightBeforeAnyChange(t *testing.T) {
	h := applytest.NewBigHost(t, numatest.BigHosts[0])
	root := t.TempDir()
	o := Options{Root: root, Sysfs: h.Sysfs, Systemd: systemd.NewOffline(root), CgroupMode: h.Mode,
		Version: "test", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	_, err := Apply(context.Background(), o, h.Bundle)
	var pe *preflight.Error
	if !errors.As(err, &pe) {
		t.Fatalf("want a preflight refusal, got %v", err)
	}
	for _, want := range []string{"nothing on the host was changed", "[ERROR KubeletBinary]: partition ", "[ERROR ContainerdBinary]", "[ERROR ClientCA]", "[ERROR Kubeconfig]", "--ignore-preflight-errors="} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
	var made []string
	applytest.Must(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if p != root {
			made = append(made, p)
		}
		return err
	}))
	if len(made) > 0 {
		t.Errorf("a refused apply made %s", strings.Join(made, ", "))
	}

	o.DryRun, o.Offline = true, true
	rep, err := Apply(context.Background(), o, h.Bundle)
	applytest.Must(t, err)
	if rep.Preflight == nil || rep.Preflight.Err() == nil {
		t.Fatalf("the dry run's preflight: %+v", rep.Preflight)
	}
	if !slicesContainsPrefix(rep.Warnings, "apply would refuse: preflight [ERROR KubeletBinary]: partition ") {
		t.Errorf("the dry run's warnings do not list the refusal:\n%s", strings.Join(rep.Warnings, "\n"))
	}
	if !rep.Changed || len(rep.Steps) == 0 {
		t.Error("the dry run stopped at the preflight")
	}

	// Ignored, the errors are warnings.
	o.IgnorePreflightErrors, err = preflight.ParseIgnore([]string{"all"})
	applytest.Must(t, err)
	rep, err = Apply(context.Background(), o, h.Bundle)
	applytest.Must(t, err)
	if rep.Preflight.Err() != nil || slicesContainsPrefix(rep.Warnings, "apply would refuse: preflight") ||
		!slicesContainsPrefix(rep.Warnings, "preflight [WARNING KubeletBinary]: partition ") {
		t.Errorf("ignored: %v\n%s", rep.Preflight.Err(), strings.Join(rep.Warnings, "\n"))
	}
}

func slicesContainsPrefix(ss []string, prefix string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
