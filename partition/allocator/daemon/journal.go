package daemon

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/partition/allocator"
)

// journal makes each change durable with one append to
// dir/allocations.journal, fdatasync'd after the answer (see sync),
// instead of the checkpoint's temp file, fsync, rename and directory
// fsync. A record is a delta: the pods the change
// (or the changes of one group commit) admitted or released and the
// nodes whose tables changed, so its size and cost do not grow with the
// pods the partition holds (a whole state a record took 3 ms at 256
// pods). Every journalMaxRecords records (or journalMaxBytes) and at the
// first write of each run, it compacts instead: the state is written as
// the checkpoint (WriteCheckpoint, atomic) and the journal emptied. The
// first write of a run compacting means nothing is ever appended after
// the torn tail a crash may have left. Not safe for concurrent use: the
// server writes one state at a time.
type journal struct {
	dir        string
	maxRecords int
	f          *os.File // open for appending; nil: the next write compacts
	size       int64
	records    int
	// last is the state the journal's records lead to (the durable one):
	// the base of the next delta.
	last *Checkpoint
	// appends and compactions count the durable writes made: one of
	// them per write (TestOneDurableWritePerDecision).
	appends, compactions uint64
	// fdatasync is unix.Fdatasync; tests hold it up or fail it.
	fdatasync func(fd int) error
	// syncBeforeAnswer: write syncs each append itself, and a failed
	// fdatasync fails the write (the change is undone, not answered).
	syncBeforeAnswer bool
}

// Compaction thresholds: 1,024 deltas amortize the checkpoint's rename
// and two fsyncs (a compaction is one decision in a thousand, beyond
// the decisions' p99); 8 MiB bounds the journal a start replays.
const (
	journalMaxRecords = 1024
	journalMaxBytes   = 8 << 20
)

// deltaVersion is the envelope of a journal record that holds a delta.
const deltaVersion = 2

// delta is one journal record: what changed from generation Base to
// Generation.
type delta struct {
	Partition  string `json:"partition"`
	Base       uint64 `json:"base"`
	Generation uint64 `json:"generation"`
	// Machine holds the nodes whose Memory Manager tables changed.
	Machine map[int]allocator.NodeState `json:"machine,omitempty"`
	// Pods are the pods whose allocation changed: the new one, or null
	// when the pod was released.
	Pods map[types.UID]*podChange `json:"pods"`
}

// podChange is a pod's allocation as the state holds it.
type podChange struct {
	Allocation allocator.Allocation         `json:"allocation"`
	Blocks     map[string][]allocator.Block `json:"blocks,omitempty"`
	Digest     string                       `json:"digest"`
}

func newJournal(dir string, syncBeforeAnswer bool) *journal {
	return &journal{dir: dir, maxRecords: journalMaxRecords, fdatasync: unix.Fdatasync, syncBeforeAnswer: syncBeforeAnswer}
}

// write makes cp durable against the daemon's crash: an append of what
// changed since the last write (changed names the pods admitted or
// released since), or a compaction. An append is in the kernel once
// write(2) returns, whatever becomes of the daemon (SIGKILL, OOM kill,
// panic); it is on the disk once sync returns, which the caller does
// after answering and before the next write, so the journal on the disk
// is always a prefix of the records answered (see sync). A compaction is
// on the disk when write returns. synced says which: false means sync
// is owed. With syncBeforeAnswer (allocator.sync_before_answer) write
// syncs the append itself and synced is true. When write fails, the
// durable state is the previous one (an append that failed is cut off
// the journal; if even that fails the journal is closed, and the next
// write compacts).
func (j *journal) write(cp *Checkpoint, changed map[types.UID]bool) (synced bool, err error) {
	if j.f == nil || j.last == nil || j.records >= j.maxRecords || j.size >= journalMaxBytes {
		return true, j.compact(cp)
	}
	rec, err := encodeEnvelope(deltaVersion, diff(j.last, cp, changed))
	if err != nil {
		return false, err
	}
	if _, err := j.f.Write(rec); err != nil {
		return false, j.undo(fmt.Errorf("appending to %s: %w", j.f.Name(), err))
	}
	if j.syncBeforeAnswer {
		if err := j.datasync(); err != nil {
			return false, j.undo(err)
		}
	}
	j.size += int64(len(rec))
	j.records++
	j.appends++
	j.last = cp
	return j.syncBeforeAnswer, nil
}

// sync puts the appends on the disk (fdatasync), so that they survive a
// crash of the OS too. Why after the answer and not before: a decision
// places containers, which an OS crash ends as well, and the next start
// releases every allocation whose container no longer runs
// (nriplugin's Synchronize); what a decision must survive is the
// daemon's own crash, and write(2) is enough for that. What an OS crash
// must not do is leave a journal the next start refuses: appending only
// after the previous append is synced keeps the records on the disk a
// prefix of those written, never one with a hole before a later one.
// When the fdatasync fails, the pages may be lost while the daemon runs
// (the kernel marks them clean all the same): the caller writes the
// state whole as the checkpoint (compact).
func (j *journal) sync() error {
	if j.f == nil {
		return nil
	}
	if err := j.datasync(); err != nil {
		j.close()
		return err
	}
	return nil
}

// datasync is the journal file's fdatasync, its error naming the file.
func (j *journal) datasync() error {
	if err := j.fdatasync(int(j.f.Fd())); err != nil {
		return fmt.Errorf("fdatasync %s: %w", j.f.Name(), err)
	}
	return nil
}

// diff is the delta from prev to cp: the changed pods as cp holds them,
// and the nodes whose tables differ.
func diff(prev, cp *Checkpoint, changed map[types.UID]bool) *delta {
	d := &delta{Partition: cp.Partition, Base: prev.Generation, Generation: cp.Generation, Pods: map[types.UID]*podChange{}}
	for id, n := range cp.State.Machine {
		if p, ok := prev.State.Machine[id]; !ok || !reflect.DeepEqual(p, n) {
			if d.Machine == nil {
				d.Machine = map[int]allocator.NodeState{}
			}
			d.Machine[id] = n
		}
	}
	for uid := range changed {
		i, found := cp.State.Find(uid)
		if !found {
			d.Pods[uid] = nil
			continue
		}
		d.Pods[uid] = &podChange{Allocation: cp.State.Allocations[i], Blocks: cp.State.Blocks[uid], Digest: cp.Digests[uid]}
	}
	return d
}

// apply changes cp by d.
func (cp *Checkpoint) apply(d *delta) {
	for id, n := range d.Machine {
		if cp.State.Machine == nil {
			cp.State.Machine = map[int]allocator.NodeState{}
		}
		cp.State.Machine[id] = n
	}
	for uid, c := range d.Pods {
		allocs := cp.State.Allocations
		i, found := cp.State.Find(uid)
		switch {
		case c == nil && found:
			cp.State.Allocations = slices.Delete(allocs, i, i+1)
		case c != nil && found:
			allocs[i] = c.Allocation
		case c != nil:
			cp.State.Allocations = slices.Insert(allocs, i, c.Allocation)
		}
		delete(cp.State.Blocks, uid)
		delete(cp.Digests, uid)
		if c == nil {
			continue
		}
		if c.Blocks != nil {
			if cp.State.Blocks == nil {
				cp.State.Blocks = map[types.UID]map[string][]allocator.Block{}
			}
			cp.State.Blocks[uid] = c.Blocks
		}
		cp.Digests[uid] = c.Digest
	}
	cp.Generation = d.Generation
}

// record is one journal record: a delta, or a whole state as binaries
// before deltas wrote it.
type record struct {
	full  *Checkpoint
	delta *delta
}

func (r record) generation() uint64 {
	if r.full != nil {
		return r.full.Generation
	}
	return r.delta.Generation
}

func (r record) partition() string {
	if r.full != nil {
		return r.full.Partition
	}
	return r.delta.Partition
}

// decodeRecord checks and decodes one journal record; reason says why it
// cannot be trusted.
func decodeRecord(raw []byte) (record, string) {
	version, data, reason := openEnvelope(raw)
	switch {
	case reason != "":
		return record{}, reason
	case version == checkpointVersion:
		cp, reason := decodeState(data)
		return record{full: cp}, reason
	}
	d := &delta{}
	if reason := decodeStrict(data, d); reason != "" {
		return record{}, reason
	}
	if d.Generation <= d.Base {
		return record{}, fmt.Sprintf("changes from generation %d to %d", d.Base, d.Generation)
	}
	for uid, c := range d.Pods {
		if c != nil && c.Allocation.PodUID != uid {
			return record{}, fmt.Sprintf("pod %q holds the allocation of pod %q", uid, c.Allocation.PodUID)
		}
	}
	return record{delta: d}, ""
}

// replay brings cp, the checkpoint (nil: none), up to date with the
// journal: one record a line, each appended before its change was
// answered. Records at or below cp's generation were left by a
// compaction that did not get to empty the journal, and are skipped;
// each other delta must start from the generation the state is at.
//
// Only a torn final write is forgiven: a last line with no newline. A
// record and its newline are one append, and the first write after a
// start compacts rather than appends, so a crash in the middle of an
// append leaves its record cut short at the end of the journal, never
// answered (or, after a crash of the OS, answered for containers that
// ended with it). Every complete line was written whole and may have
// been answered: one that does not decode is corruption (a flipped
// bit, a bad disk, an edit), refused wherever it is, the last line
// included, since skipping it would forget the allocations it and
// the records after it hold (#38: a byte flipped in each of a
// journal's records left the restarted daemon serving the checkpoint
// alone, silently).
func replay(cp *Checkpoint, journal []byte) (*Checkpoint, string) {
	r := replayer{cp: cp, checkpoint: describeCheckpoint(cp)}
	for line := 1; ; line++ {
		rec, rest, complete := bytes.Cut(journal, []byte("\n"))
		if !complete {
			return r.cp, "" // the end, or a torn final write
		}
		if reason := r.add(rec); reason != "" {
			return nil, fmt.Sprintf("record %d (line %d, byte offset %d): %s", line, line, r.offset, reason)
		}
		r.offset += len(rec) + 1
		journal = rest
	}
}

// replayer is replay's state between two records.
type replayer struct {
	cp         *Checkpoint
	checkpoint string // the checkpoint, as the error of a bad record names it
	offset     int    // of the record being read
	records    int    // valid records read
	last       uint64 // the last valid record's generation (when records > 0)
}

// describeCheckpoint names cp's generation, the state a recovery that
// gives up the journal would go back to.
func describeCheckpoint(cp *Checkpoint) string {
	if cp == nil {
		return "there is no checkpoint"
	}
	return fmt.Sprintf("the checkpoint is at generation %d", cp.Generation)
}

// add applies one complete journal line; reason says why it cannot be.
func (r *replayer) add(line []byte) string {
	rec, reason := decodeRecord(line)
	if reason != "" {
		return fmt.Sprintf("%s; the line is complete, so no write a crash cut short: it and the records after it may hold answered allocations (%s, and the %d valid records before it reach generation %d)",
			reason, r.checkpoint, r.records, r.stateGeneration())
	}
	gen := rec.generation()
	switch {
	case r.records > 0 && gen <= r.last:
		return fmt.Sprintf("generation %d after %d", gen, r.last)
	case r.cp != nil && rec.partition() != r.cp.Partition:
		return fmt.Sprintf("its changes are of partition %q, the checkpoint's of %q", rec.partition(), r.cp.Partition)
	}
	r.records, r.last = r.records+1, gen
	switch {
	case r.cp != nil && gen <= r.cp.Generation:
	case rec.full != nil:
		r.cp = rec.full
	case r.cp == nil:
		return fmt.Sprintf("changes from generation %d, and no checkpoint they apply to", rec.delta.Base)
	case rec.delta.Base != r.cp.Generation:
		return fmt.Sprintf("changes from generation %d, but the state before it is at generation %d", rec.delta.Base, r.cp.Generation)
	default:
		r.cp.apply(rec.delta)
	}
	return ""
}

// stateGeneration is the generation of the state read so far (0: none).
func (r *replayer) stateGeneration() uint64 {
	if r.cp == nil {
		return 0
	}
	return r.cp.Generation
}

// undo cuts a failed append off the journal.
func (j *journal) undo(err error) error {
	if terr := j.f.Truncate(j.size); terr != nil || j.f.Sync() != nil {
		j.close()
	}
	return err
}

// compact writes cp as the checkpoint and empties the journal. Once the
// checkpoint is written cp is durable: a journal that cannot be emptied
// holds older generations only, which ReadCheckpoint skips, and is
// closed so that the next write tries again.
func (j *journal) compact(cp *Checkpoint) error {
	if err := WriteCheckpoint(j.dir, cp); err != nil {
		return err
	}
	j.compactions++
	j.last = cp
	if j.f == nil {
		f, err := os.OpenFile(filepath.Join(j.dir, JournalName), os.O_WRONLY|os.O_CREATE|os.O_APPEND|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return nil
		}
		j.f = f
	}
	if err := j.f.Truncate(0); err != nil {
		j.close()
		return nil
	}
	if err := j.f.Sync(); err != nil {
		j.close()
		return nil
	}
	if err := fsutil.SyncDir(j.dir); err != nil { // a journal just created
		j.close()
		return nil
	}
	j.size, j.records = 0, 0
	return nil
}

func (j *journal) close() {
	if j.f != nil {
		_ = j.f.Close()
		j.f = nil
	}
}
