package render

import (
	"strings"

	"github.com/numa-partition/numa-partition/partition/planner"
)

// nodeDirs is what containerd's unit needs for a partition's node
// dirs (planner.NodeDir): the systemd directives that make both ends of
// every bind (the namespace is set up before any ExecStartPre= runs,
// and a bind needs both ends), and the binds.
type nodeDirs struct {
	// Directories are "Directive=dir dir..." lines, relative to the
	// directive's tree, in a fixed order.
	Directories []string
	Binds       []string // source:path
	// PreserveRuntime keeps the /run ones over a stop: a running
	// container (its shim outlives containerd) still has the old
	// directory bound, and flannel's subnet lease must be where the
	// next containerd's CNI plugin looks.
	PreserveRuntime bool
}

// nodeDirsView renders a partition's node dirs, which the planner's rules
// (planner.CheckPaths) checked when the plan was made or read: each
// path in one of planner.NodeDirTrees, not the system's, overlapping no
// other, its source the partition's own beside it, in the same tree.
func nodeDirsView(p *planner.Partition) *nodeDirs {
	if len(p.NodeDirs) == 0 {
		return nil
	}
	v := &nodeDirs{}
	dirs := map[string][]string{}
	for _, d := range p.NodeDirs {
		tree := d.Tree()
		for _, end := range []string{d.Path, d.Source} {
			dirs[tree] = append(dirs[tree], strings.TrimPrefix(end, tree+"/"))
		}
		v.Binds = append(v.Binds, d.Source+":"+d.Path)
	}
	for _, t := range planner.NodeDirTrees {
		if len(dirs[t.Path]) > 0 {
			v.Directories = append(v.Directories, t.Directive+"="+strings.Join(dirs[t.Path], " "))
		}
	}
	v.PreserveRuntime = len(dirs["/run"]) > 0
	return v
}
