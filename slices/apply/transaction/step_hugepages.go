package transaction

import (
	"context"

	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/hugepool"
)

// KindHugepages sizes one node's hugepage pool of one page size.
const KindHugepages Kind = "hugepages"

// SetHugepages sets a node's pool to its target and records a shortfall;
// the undo sets the count it had before.
type SetHugepages struct {
	Hugepages *record.HugepageTarget `json:"hugepages"`
}

func (SetHugepages) Kind() Kind         { return KindHugepages }
func (a SetHugepages) describe() string { return a.Hugepages.String() }

func (a SetHugepages) run(e *Executor, ctx context.Context, _ Current, res *Result) ([]undo, error) {
	h := *a.Hugepages
	u := undo{what: "hugepages " + h.String(), run: func(context.Context) error {
		_, err := hugepool.SetPool(e.poolWriter(), e.Sysfs, h.Pool(true))
		return err
	}}
	got, err := hugepool.SetPool(e.poolWriter(), e.Sysfs, h.Pool(false))
	if err == nil && got < h.Count {
		sf := Shortfall{Node: h.Node, PageSize: h.PageSize, Wanted: h.Count, Got: got}
		res.Shortfalls = append(res.Shortfalls, sf)
		e.logger().Warn("hugepage shortfall", "detail", sf.String())
	}
	return []undo{u}, err
}

// setHugepages sizes every planned pool whose count differs.
func setHugepages(p *planning) {
	for _, h := range p.d.Hugepages {
		cur, ok := p.c.Hugepages[HugepageKey{h.Node, h.PageSize}]
		if !ok || cur != h.Count {
			h.Before = cur
			p.add(SetHugepages{Hugepages: &h}, "")
		}
	}
}
