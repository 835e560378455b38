package apply

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"

	bundle "github.com/numa-partition/numa-partition/slices/render"
)

// writePending writes the record of an apply that is about to touch the
// host, marked pending: rec's files, units, slices, hugepages and
// directories, the previous generation's that rec drops (a killed apply
// may not have removed them yet), and every directory the steps may
// create. A kill -9 anywhere after this leaves a record that covers the
// host; the apply's last step replaces it with the finished one. It
// returns how to put the previous record back, after a rollback.
func writePending(root string, rec, prev *Record, cur Current, d Desired) (func() error, error) {
	p := filepath.Join(root, RecordPath)
	old, existed, err := readFileState(p)
	if err != nil {
		return nil, err
	}
	pend := *rec
	pend.Pending = true
	pend.Files = slices.Clone(rec.Files)
	pend.Units = slices.Clone(rec.Units)
	pend.Slices = slices.Clone(rec.Slices)
	pend.Hugepages = slices.Clone(rec.Hugepages)
	pend.Dirs = slices.Clone(rec.Dirs)
	if prev != nil {
		for _, f := range prev.Files {
			if _, ok := pend.file(f.Path); !ok {
				pend.Files = append(pend.Files, f)
			}
		}
		for _, u := range prev.Units {
			if !slices.ContainsFunc(pend.Units, func(x bundle.Unit) bool { return x.Name == u.Name }) {
				pend.Units = append(pend.Units, u)
			}
		}
		for _, s := range prev.Slices {
			if !slices.ContainsFunc(pend.Slices, func(x SliceSet) bool { return x.Unit == s.Unit }) {
				pend.Slices = append(pend.Slices, s)
			}
		}
		for _, h := range prev.Hugepages {
			if !slices.ContainsFunc(pend.Hugepages, func(x HugepageTarget) bool { return x.Node == h.Node && x.PageSize == h.PageSize }) {
				pend.Hugepages = append(pend.Hugepages, h)
			}
		}
	}
	for _, f := range d.Files {
		pend.Dirs = appendNew(pend.Dirs, missingDirs(root, path.Dir(f.Path))...)
		if _, there := cur.Files[f.Path]; there {
			if _, ours := prev.file(f.Path); !ours {
				pend.Dirs = appendNew(pend.Dirs, missingDirs(root, path.Dir(path.Join(OriginalsDir, f.Path)))...)
			}
		}
	}
	// The record's own directory is made here, before the steps: the
	// finished record must list it too.
	created := missingDirs(root, path.Dir(RecordPath))
	pend.Dirs = appendNew(pend.Dirs, created...)
	rec.Dirs = appendNew(rec.Dirs, created...)
	b, err := pend.marshal()
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(p, b, 0o644); err != nil {
		return nil, fmt.Errorf("writing the pending record: %w", err)
	}
	return func() error {
		if existed {
			return writeFileAtomic(p, old.Content, old.Mode)
		}
		if err := removeFile(p); err != nil {
			return err
		}
		return removeEmptyDirs(root, created)
	}, nil
}
