package transaction

import (
	"context"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"slices"
)

// KindRecord writes the record, last.
const KindRecord Kind = "record"

// WriteRecord writes the Executor's record; the undo puts the previous
// one back.
type WriteRecord struct{}

func (WriteRecord) Kind() Kind       { return KindRecord }
func (WriteRecord) describe() string { return "" }

func (WriteRecord) run(e *Executor, _ context.Context, _ Current, _ *Result) ([]undo, error) {
	return e.writeOwn(record.Path, "record", e.Record.Marshal)
}

// recordIfChanged writes the record when what it says changed: the files, the
// pools, a slice's live CPUs, the network; or when there is none yet, or
// the one there is pending.
func recordIfChanged(p *planning) {
	listed := slices.ContainsFunc(p.steps, func(s Step) bool {
		switch s.Action.(type) {
		case SetHugepages, SetSliceCPUs, ForgetNetwork:
			return true
		}
		return false
	})
	if len(p.changed) > 0 || listed || p.c.Record == nil || p.c.Record.Pending {
		p.add(WriteRecord{}, "")
	}
}

// WritesRecord says whether steps write the record.
func WritesRecord(steps []Step) bool {
	return slices.ContainsFunc(steps, func(s Step) bool { return s.Kind() == KindRecord })
}
