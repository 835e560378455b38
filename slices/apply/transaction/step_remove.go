package transaction

import (
	"context"
	"fmt"
)

// KindRemove removes a file apply wrote that is no longer rendered.
const KindRemove Kind = "remove"

// RemoveFile removes Path below the root, or puts back the original apply
// kept aside when it wrote there; the undo puts back what was there.
type RemoveFile struct {
	Path string `json:"path"`
}

func (RemoveFile) Kind() Kind         { return KindRemove }
func (a RemoveFile) describe() string { return "/" + a.Path }

func (a RemoveFile) run(e *Executor, ctx context.Context, cur Current, _ *Result) ([]undo, error) {
	f, ours := cur.Record.File(a.Path)
	if !ours {
		return nil, fmt.Errorf("removing %s: the record does not list it, so nothing says apply wrote it", e.path(a.Path))
	}
	return []undo{e.restoreFile(KindRemove, a.Path, cur)}, e.RemoveOwned(f)
}

// removeFiles removes the recorded files that are no longer rendered.
func removeFiles(p *planning) {
	if p.c.Record == nil {
		return
	}
	rendered := map[string]bool{}
	for _, f := range p.d.Files {
		rendered[f.Path] = true
	}
	for _, rf := range p.c.Record.Files {
		if _, exists := p.c.Files[rf.Path]; exists && !rendered[rf.Path] {
			p.add(RemoveFile{Path: rf.Path}, "no longer rendered")
			p.changed[rf.Path] = true
		}
	}
}
