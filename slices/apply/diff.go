package apply

import (
	"fmt"

	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// FileDiff is what apply would change in files below root, as a unified
// diff, without systemd: the rendered files against those on disk (and the
// recorded files no longer rendered), for `numa-partition diff`. changed
// is false when the files are as rendered. Units are not compared: their
// states need systemd (apply --dry-run).
func FileDiff(root string, b bundle.Bundle, mode CgroupMode) (diff string, changed bool, err error) {
	if mode == "" {
		if mode, err = DetectCgroupMode(root); err != nil {
			return "", false, fmt.Errorf("%w (name the host's cgroup mode: --cgroup-mode)", err)
		}
	}
	d, err := NewDesired(b, mode)
	if err != nil {
		return "", false, err
	}
	prev, err := record.Read(root)
	if err != nil {
		return "", false, err
	}
	files, err := gatherFiles(root, d, prev)
	if err != nil {
		return "", false, err
	}
	cur := Current{Files: files, Record: prev}
	var steps []Step
	for _, s := range Plan(d, cur) {
		if _, _, ok := s.fileChange(); ok {
			steps = append(steps, s)
		}
	}
	return Diff(steps, cur), len(steps) > 0, nil
}
