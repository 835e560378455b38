package record

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/numa-partition/numa-partition/internal/hostpaths"
)

// writtenTrees are the directories below the root that apply writes
// bundle files in: systemd's unit directory (the rendered units and
// drop-ins), numa-partition's config directory (the plan, the
// partitions' hugepage views, the default kubelet and containerd
// configs), and the other trees a plan's kubelet.config_path or
// runtime.config_path may name (the planner's writtenTrees, which
// checks those keys).
var writtenTrees = append([]string{hostpaths.UnitDirRel}, relTrees(hostpaths.ConfigTrees)...)

// relTrees are trees relative to the root.
func relTrees(trees []string) []string {
	out := make([]string, len(trees))
	for i, t := range trees {
		out[i] = strings.TrimPrefix(t, "/")
	}
	return out
}

// stateTree is numa-partition's own state (the record, the kept
// originals, the allocators' checkpoints): below var/lib, but no bundle
// file goes there.
var stateTree = strings.TrimPrefix(hostpaths.StateDir, "/")

// WrittenPathProblem says why p, relative to the root, cannot be a file
// apply writes; "" when it can. One rule for the bundle's files, which
// apply writes, and the record's, which apply and remove delete: a
// record entry apply could not have written (an edited or forged record
// listing etc/hostname, #38) is refused rather than deleted.
func WrittenPathProblem(p string) string {
	switch {
	case p == "" || path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../"):
		return "must be relative to the root, clean, and inside it"
	case hostpaths.Under(p, stateTree):
		return fmt.Sprintf("lies in /%s, numa-partition's own state, where apply writes no bundle file", stateTree)
	case !slices.ContainsFunc(writtenTrees, func(t string) bool { return p != t && hostpaths.Under(p, t) }):
		return "is outside the directories apply writes files in (/" + strings.Join(writtenTrees, ", /") + ")"
	}
	return ""
}
