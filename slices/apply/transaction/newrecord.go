package transaction

import (
	"slices"
	"strings"
	"time"

	"github.com/numa-partition/numa-partition/slices/apply/record"
)

// NewRecord is the record of generation d applied at at (UTC) by version
// over the host cur and the previous record prev.
func NewRecord(d Desired, cur Current, prev *record.Record, mode CgroupMode, at time.Time, version string) *record.Record {
	r := &record.Record{Generation: 1, AppliedAt: at.UTC(), Version: version, CgroupMode: mode,
		Units: d.Units, Slices: d.Slices, Files: []record.File{}, Hugepages: []record.HugepageTarget{}}
	r.Dirs = []string{}
	r.Network = recordNetwork(d.Network)
	if prev != nil {
		r.Generation = prev.Generation + 1
		r.Dirs = append(r.Dirs, prev.Dirs...)
	}
	for _, f := range d.Files {
		rf := record.File{Path: f.Path, SHA256: record.Hash(f.Content), Mode: f.Mode.Perm()}
		if pf, ours := prev.File(f.Path); ours {
			rf.Original = pf.Original
		} else if _, existed := cur.Files[f.Path]; existed {
			rf.Original = true
		}
		r.Files = append(r.Files, rf)
	}
	for _, h := range d.Hugepages {
		h.Before = cur.Hugepages[HugepageKey{h.Node, h.PageSize}]
		if prev != nil {
			for _, ph := range prev.Hugepages {
				if ph.Node == h.Node && ph.PageSize == h.PageSize {
					h.Before = ph.Before
				}
			}
		}
		r.Hugepages = append(r.Hugepages, h)
	}
	r.Hostname = d.Hostname
	r.ReservedCPUs = d.ReservedCPUs
	r.Partitions = RecordPartitions(d)
	return r
}

// RecordPartitions are the bundle's partitions as the record keeps them;
// for a bundle without them (made by hand, in tests), those of d's
// slices.
func RecordPartitions(d Desired) []record.Partition {
	if len(d.Partitions) > 0 {
		return slices.Clone(d.Partitions)
	}
	out := []record.Partition{}
	for _, u := range d.Units {
		if u.Partition != "" && strings.HasSuffix(u.Name, ".slice") {
			out = append(out, record.Partition{Name: u.Partition, Slice: u.Name})
		}
	}
	return out
}
