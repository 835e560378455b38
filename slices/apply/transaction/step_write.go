package transaction

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"

	"github.com/numa-partition/numa-partition/slices/apply/host"
)

// KindWrite writes a rendered file that is missing or differs.
const KindWrite Kind = "write"

// WriteFile writes Content at Path below the root, keeping a foreign
// original aside; the undo puts back what was there.
type WriteFile struct {
	Path    string      `json:"path"`
	Content []byte      `json:"-"`
	Mode    fs.FileMode `json:"-"`
}

func (WriteFile) Kind() Kind         { return KindWrite }
func (a WriteFile) describe() string { return "/" + a.Path }

func (a WriteFile) run(e *Executor, ctx context.Context, cur Current, _ *Result) ([]undo, error) {
	old, existed := cur.Files[a.Path]
	var undos []undo
	if existed {
		if _, ours := cur.Record.File(a.Path); !ours {
			kept, err := e.keepOriginal(a.Path, old)
			if err != nil {
				return kept, err
			}
			undos = append(undos, kept...)
		}
	}
	created := missingDirs(e.Root, path.Dir(a.Path))
	e.Record.Dirs = AppendNew(e.Record.Dirs, created...)
	undos = append(undos, undo{phase: phaseFiles, what: "directories of /" + a.Path, run: func(context.Context) error {
		return RemoveEmptyDirs(e.Root, created)
	}}, e.restoreFile(KindWrite, a.Path, cur))
	if err := host.WriteFileAtomic(e.Root, a.Path, a.Content, a.Mode); err != nil {
		return undos, fmt.Errorf("writing %s: %w", e.path(a.Path), err)
	}
	return undos, nil
}

// writeFiles writes every rendered file that is missing, differs, or has
// another mode.
func writeFiles(p *planning) {
	for _, f := range p.d.Files {
		cur, ok := p.c.Files[f.Path]
		mode := f.Mode.Perm()
		if mode == 0 {
			mode = 0o644
		}
		var reason string
		switch {
		case !ok:
			reason = "new"
		case !bytes.Equal(cur.Content, f.Content):
			reason = "changed"
		case cur.Mode.Perm() != mode:
			reason = "mode " + cur.Mode.Perm().String()
		default:
			continue
		}
		p.add(WriteFile{Path: f.Path, Content: f.Content, Mode: mode}, reason)
		p.changed[f.Path] = true
	}
}
