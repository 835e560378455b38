package transaction

import (
	"fmt"
	"path"
	"slices"

	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// WritePending writes the record of an apply that is about to touch the
// host, marked pending: rec's files, units, slices, hugepages,
// partitions and directories, the previous generation's that rec drops (a killed apply
// may not have removed them yet), and every directory the steps may
// create. A kill -9 anywhere after this leaves a record that covers the
// host; the apply's last step replaces it with the finished one. It
// returns how to put the previous record back, after a rollback.
func WritePending(root string, rec, prev *record.Record, cur Current, d Desired) (func() error, error) {
	old, existed, err := host.ReadFileState(root, record.Path)
	if err != nil {
		return nil, err
	}
	pend := *rec
	pend.Pending = true
	pend.Dirs = slices.Clone(rec.Dirs)
	if prev == nil {
		prev = &record.Record{}
	}
	pend.Files = appendMissing(rec.Files, prev.Files, func(f record.File) string { return f.Path })
	for i := range pend.Files {
		pend.Files[i].PreviousSHA256 = previousSums(pend.Files[i], prev)
	}
	pend.Units = appendMissing(rec.Units, prev.Units, func(u bundle.Unit) string { return u.Name })
	pend.Slices = appendMissing(rec.Slices, prev.Slices, func(s record.SliceSet) string { return s.Unit })
	pend.Network = mergeNetwork(rec.Network, prev.Network)
	pend.Hugepages = appendMissing(rec.Hugepages, prev.Hugepages, func(h record.HugepageTarget) HugepageKey { return HugepageKey{h.Node, h.PageSize} })
	// The partitions (and Node names) rec drops stay listed until the
	// apply finishes: killed mid-drain of a partition that goes, the next
	// apply (or remove) must still see it go, drain its Node and delete it.
	pend.Partitions = appendMissing(rec.Partitions, prev.Partitions, func(p record.Partition) [2]string { return [2]string{p.Name, p.NodeName} })
	for _, f := range d.Files {
		pend.Dirs = AppendNew(pend.Dirs, missingDirs(root, path.Dir(f.Path))...)
		if _, there := cur.Files[f.Path]; there {
			if _, ours := prev.File(f.Path); !ours {
				pend.Dirs = AppendNew(pend.Dirs, missingDirs(root, path.Dir(path.Join(OriginalsDir, f.Path)))...)
			}
		}
	}
	for _, u := range d.Units {
		if u.KubeletState != nil {
			pend.Dirs = AppendNew(pend.Dirs, missingDirs(root, u.KubeletState.Dir)...)
		}
	}
	// The record's own directory is made here, before the steps: the
	// finished record must list it too.
	created := missingDirs(root, path.Dir(record.Path))
	pend.Dirs = AppendNew(pend.Dirs, created...)
	rec.Dirs = AppendNew(rec.Dirs, created...)
	if err := pend.Write(root); err != nil {
		return nil, fmt.Errorf("writing the pending record: %w", err)
	}
	return func() error {
		if existed {
			return host.WriteFileAtomic(root, record.Path, old.Content, old.Mode)
		}
		if err := host.RemoveFile(root, record.Path); err != nil {
			return err
		}
		return RemoveEmptyDirs(root, created)
	}, nil
}

// previousSums are the sha256s other than f's that prev's entry for f's
// path accepts: the file may still hold any of them after a kill.
func previousSums(f record.File, prev *record.Record) []string {
	pf, ok := prev.File(f.Path)
	if !ok {
		return f.PreviousSHA256
	}
	sums := slices.Clone(f.PreviousSHA256)
	for _, s := range append([]string{pf.SHA256}, pf.PreviousSHA256...) {
		if s != f.SHA256 && !slices.Contains(sums, s) {
			sums = append(sums, s)
		}
	}
	return sums
}

// appendMissing is a copy of list plus the items of more whose key list
// does not have, in their order.
func appendMissing[T any, K comparable](list, more []T, key func(T) K) []T {
	out := slices.Clone(list)
	have := map[K]bool{}
	for _, x := range list {
		have[key(x)] = true
	}
	for _, x := range more {
		if !have[key(x)] {
			have[key(x)] = true
			out = append(out, x)
		}
	}
	return out
}
