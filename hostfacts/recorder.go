package hostfacts

import (
	"github.com/numa-partition/numa-partition/internal/cgroupmode"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// Recorder answers the planner from Host and keeps every answer: what a
// plan took from this host, for a facts file (planner.FactsFile) from
// which a plan made elsewhere is the same.
type Recorder struct {
	Host  Host
	facts planner.FixedFacts
}

// Filesystem is Host's, kept: "/" as the root, any other mount point
// once.
func (r *Recorder) Filesystem(dir string) (planner.Filesystem, error) {
	fs, err := r.Host.Filesystem(dir)
	if err != nil {
		return fs, err
	}
	if fs.Path == "/" {
		r.facts.Root = fs
		return fs, nil
	}
	for _, m := range r.facts.Mounts {
		if m.Path == fs.Path {
			return fs, nil
		}
	}
	r.facts.Mounts = append(r.facts.Mounts, fs)
	return fs, nil
}

// TaskLimit is Host's, kept.
func (r *Recorder) TaskLimit() (uint64, error) {
	n, err := r.Host.TaskLimit()
	if err == nil {
		r.facts.Tasks = n
	}
	return n, err
}

// Interfaces are Host's, kept (an empty list too: it is checked against).
func (r *Recorder) Interfaces() ([]planner.Interface, error) {
	ifaces, err := r.Host.Interfaces()
	if err == nil {
		if ifaces == nil {
			ifaces = []planner.Interface{}
		}
		r.facts.NetInterfaces = ifaces
	}
	return ifaces, err
}

// CgroupMode is Host's, kept.
func (r *Recorder) CgroupMode() (cgroupmode.Mode, error) {
	m, err := r.Host.CgroupMode()
	if err == nil {
		r.facts.Cgroup = m
	}
	return m, err
}

// Facts are the answers so far, as declared facts that give them again.
func (r *Recorder) Facts() planner.FixedFacts { return r.facts }
