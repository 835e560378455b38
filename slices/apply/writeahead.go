package apply

import (
	"slices"

	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/apply/transaction"
)

// writeAhead is the record of an apply that changes the host: written
// pending before the first change (with --drain, before the first
// cordon), so that a kill leaves listed what this apply may leave behind.
type writeAhead struct {
	a   *attempt
	rec *record.Record
	// undo puts back the record as it was; nil until written.
	undo func() error
}

func (a *attempt) writeAhead() *writeAhead {
	rec := transaction.NewRecord(a.d, a.cur, a.prev, a.rep.CgroupMode, a.o.Now(), a.o.Version)
	if a.prev != nil {
		rec.Cordoned = slices.Clone(a.prev.Cordoned) // not let go yet: nodes.SettleCordoned
	}
	return &writeAhead{a: a, rec: rec}
}

// write writes the record pending, with the Nodes cordon adds to it.
func (w *writeAhead) write(cordon []record.CordonedNode) error {
	for _, c := range cordon {
		if !slices.Contains(w.rec.Cordoned, c) {
			w.rec.Cordoned = append(w.rec.Cordoned, c)
		}
	}
	var err error
	w.undo, err = transaction.WritePending(w.a.o.Root, w.rec, w.a.prev, w.a.cur, w.a.d)
	return err
}

// written says whether the record was written pending.
func (w *writeAhead) written() bool { return w.undo != nil }

// restore puts back the record as it was before this apply wrote it
// pending (nothing to do when it did not).
func (w *writeAhead) restore() error {
	if w.undo == nil {
		return nil
	}
	return w.undo()
}

// finish writes the record as finished, where no record step did.
func (w *writeAhead) finish() error { return w.rec.Write(w.a.o.Root) }
