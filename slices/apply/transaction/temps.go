package transaction

import (
	"path"
	"slices"

	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/apply/record"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// OwnPaths are the files apply writes for the bundle files and units
// given and for a record: each file, the original kept beside it, the
// record itself and each kubelet's settings stamp. An apply killed
// between a write's create and its rename leaves a temporary file next
// to one of them (fsutil.TempPattern), and nowhere else.
func OwnPaths(files []string, units []bundle.Unit, rec *record.Record) []string {
	out := []string{record.Path}
	if rec != nil {
		for _, f := range rec.Files {
			files = append(files, f.Path)
		}
		units = append(slices.Clone(units), rec.Units...)
	}
	for _, f := range files {
		out = append(out, f, path.Join(OriginalsDir, f))
	}
	for _, u := range units {
		if u.KubeletState != nil {
			out = append(out, path.Join(u.KubeletState.Dir, KubeletStampName))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// SweepTemps removes the temporary files interrupted writes left next to
// paths below root, and returns them: then the directories apply made
// are empty again, and remove can take them away.
func SweepTemps(root string, paths []string) ([]string, error) {
	var removed []string
	for _, p := range paths {
		r, err := host.Root(root).RemoveTemps(p)
		removed = append(removed, r...)
		if err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// DesiredPaths are the paths of d's files.
func DesiredPaths(d Desired) []string {
	out := make([]string, 0, len(d.Files))
	for _, f := range d.Files {
		out = append(out, f.Path)
	}
	return out
}
