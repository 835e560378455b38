package apply

import (
	"fmt"
	"path/filepath"

	"github.com/numa-partition/numa-partition/partition"
	bundle "github.com/numa-partition/numa-partition/slices/render"
)

// FileDiff is what apply would change in files below root, as a unified
// diff, without systemd: the rendered files against those on disk (and the
// recorded files no longer rendered), for `numa-partition diff`. changed
// is false when the files are as rendered. Units are not compared: their
// states need systemd (apply --dry-run).
func FileDiff(root string, plan *partition.Plan, b bundle.Bundle, mode CgroupMode) (diff string, changed bool, err error) {
	if mode == "" {
		if mode, err = DetectCgroupMode(root); err != nil {
			return "", false, fmt.Errorf("%w (name the host's cgroup mode: --cgroup-mode)", err)
		}
	}
	d, err := NewDesired(plan, b, mode)
	if err != nil {
		return "", false, err
	}
	prev, err := ReadRecord(root)
	if err != nil {
		return "", false, err
	}
	cur := Current{Files: map[string]FileState{}, Record: prev}
	paths := map[string]bool{}
	for _, f := range d.Files {
		paths[f.Path] = true
	}
	if prev != nil {
		for _, f := range prev.Files {
			paths[f.Path] = true
		}
	}
	for p := range paths {
		fs, ok, err := readFileState(filepath.Join(root, p))
		if err != nil {
			return "", false, fmt.Errorf("reading the host: %w", err)
		}
		if ok {
			cur.Files[p] = fs
		}
	}
	var files []Step
	for _, s := range Plan(d, cur) {
		if s.Kind == KindWrite || s.Kind == KindRemove {
			files = append(files, s)
		}
	}
	return Diff(files, cur), len(files) > 0, nil
}
