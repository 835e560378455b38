package transaction

import (
	"context"
	"strings"

	"github.com/numa-partition/numa-partition/slices/bundle"
)

// KindAttachV1 moves a started service into its partition's cpuset v1
// group (cgroup v1 and hybrid hosts).
const KindAttachV1 Kind = "attach-v1"

// AttachV1 moves Unit's processes into Slice's cpuset v1 group. Nothing
// to undo: a rollback stops or restarts the service.
type AttachV1 struct {
	Unit  string `json:"unit"`
	Slice string `json:"slice"`
}

func (AttachV1) Kind() Kind         { return KindAttachV1 }
func (a AttachV1) describe() string { return a.Unit + " to " + a.Slice }

func (a AttachV1) run(e *Executor, ctx context.Context, _ Current, _ *Result) ([]undo, error) {
	info, err := e.Systemd.Unit(ctx, a.Unit)
	if err != nil {
		return nil, err
	}
	if info.ControlGroup == "" {
		return nil, nil // a oneshot that has exited has no processes
	}
	_, err = cpusetV1Group(e.Root, sliceCgroup(a.Slice)).attach(e.Root, info.ControlGroup)
	return nil, err
}

// attachV1 follows a service's start on a cgroup v1 or hybrid host: the
// service joins its partition's group.
func (p *planning) attachV1(u bundle.Unit) {
	if !p.v1() || u.Partition == "" || !strings.HasSuffix(u.Name, ".service") {
		return
	}
	if slice := partitionSlice(p.d.Units, u.Partition); slice != "" {
		p.add(AttachV1{Unit: u.Name, Slice: slice}, "")
	}
}

func partitionSlice(us []bundle.Unit, part string) string {
	for _, u := range us {
		if u.Partition == part && strings.HasSuffix(u.Name, ".slice") {
			return u.Name
		}
	}
	return ""
}
