package transaction

import (
	"fmt"
	"strings"

	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/pmezard/go-difflib/difflib"
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
		if _, _, ok := s.FileChange(); ok {
			steps = append(steps, s)
		}
	}
	return Diff(steps, cur), len(steps) > 0, nil
}

// Diff is the unified diff of the file steps: what --dry-run prints.
// diffLines splits content into lines for a unified diff, each with its
// newline. Not difflib.SplitLines: it adds a line after the last newline,
// so a new file's hunk started "@@ -1 +1,45 @@" with a blank context line
// and every file got a blank last line, which `git apply` rejects.
func diffLines(content []byte) []string {
	if len(content) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(content), "\n")
	if lines[len(lines)-1] == "" {
		return lines[:len(lines)-1]
	}
	lines[len(lines)-1] += "\n" // the last line has none: diffed as if it had
	return lines
}

func Diff(steps []Step, cur Current) string {
	var b strings.Builder
	for _, st := range steps {
		s, removed, ok := st.FileChange()
		if !ok {
			continue
		}
		old := cur.Files[s.Path]
		ud := difflib.UnifiedDiff{
			A: diffLines(old.Content), B: diffLines(s.Content),
			FromFile: "a/" + s.Path, ToFile: "b/" + s.Path, Context: 3,
		}
		if _, ok := cur.Files[s.Path]; !ok {
			ud.FromFile = "/dev/null"
		}
		if removed {
			ud.ToFile = "/dev/null"
		}
		text, err := difflib.GetUnifiedDiffString(ud)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", s.Path, err)
			continue
		}
		if text == "" { // same content, other mode
			fmt.Fprintf(&b, "mode change /%s: %s -> %s\n", s.Path, old.Mode.Perm(), s.Mode.Perm())
		}
		b.WriteString(text)
	}
	return b.String()
}
