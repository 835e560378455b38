package daemon

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/numa-partition/numa-partition/internal/fsutil"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/partition/allocator"
)

// CheckpointName is the state file inside the state directory, and
// JournalName the states written since it (see journal).
const (
	CheckpointName = "allocations.json"
	JournalName    = "allocations.journal"
)

const (
	checkpointVersion = 1
	lockName          = "lock"
)

// maxCheckpointBytes bounds the checkpoint read at start: a partition's
// state is a few KiB per container, and 1024 containers at most (the
// daemon's cap) stay far below it.
const maxCheckpointBytes = 64 << 20

// maxJournalBytes bounds the journal read at start: it is compacted
// once it holds journalMaxBytes, plus the one record that got it there.
const maxJournalBytes = journalMaxBytes + maxCheckpointBytes

// Checkpoint is everything the daemon must get back after a crash.
type Checkpoint struct {
	Partition  string          `json:"partition"`
	Generation uint64          `json:"generation"`
	State      allocator.State `json:"state"`
	// Digests maps every admitted pod UID to its manifest's digest, so a
	// retry after a crash is answered with the decision that was made.
	Digests map[types.UID]string `json:"digests"`
}

// checkpointFile is the on-disk envelope. Checksum is the SHA-256 of the
// compact JSON of Data, so whitespace edits pass and any other change,
// truncation or bit flip is caught.
type checkpointFile struct {
	Version  int             `json:"version"`
	Checksum string          `json:"checksum"`
	Data     json.RawMessage `json:"data"`
}

// CorruptError is a checkpoint that exists but cannot be trusted. The daemon
// refuses to start on it: starting empty would hand out memory that running
// pods already own.
type CorruptError struct {
	Path   string
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("checkpoint %s is corrupted: %s", e.Path, e.Reason)
}

func checksum(data []byte) (string, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return "", err
	}
	sum := sha256.Sum256(compact.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// WriteCheckpoint replaces dir/allocations.json atomically and durably:
// write a temp file in the same directory, fsync it, rename it over the old
// one, fsync the directory. After it returns the new state survives power
// loss; if it fails, the old checkpoint is intact.
func WriteCheckpoint(dir string, cp *Checkpoint) error {
	out, err := encodeCheckpoint(cp)
	if err != nil {
		return err
	}
	final := filepath.Join(dir, CheckpointName)
	if err := fsutil.WriteFile(final, out, 0o600); err != nil {
		return fmt.Errorf("writing checkpoint %s: %w", final, err)
	}
	return nil
}

// encodeCheckpoint is the checkpoint's envelope, one line: the file's
// content, and a journal record.
func encodeCheckpoint(cp *Checkpoint) ([]byte, error) {
	data, err := json.Marshal(cp)
	if err != nil {
		return nil, fmt.Errorf("encoding checkpoint: %w", err)
	}
	// json.Marshal's output is already compact (and has no newline): hash
	// it as it is, and write the envelope by hand rather than re-encoding
	// (and re-scanning) the data, which is most of the cost of a large
	// state.
	sum := sha256.Sum256(data)
	out := make([]byte, 0, len(data)+128)
	out = fmt.Appendf(out, `{"version":%d,"checksum":"sha256:%s","data":`, checkpointVersion, hex.EncodeToString(sum[:]))
	out = append(out, data...)
	return append(out, "}\n"...), nil
}

// ReadCheckpoint loads the last durable state: dir/allocations.json,
// then the newer states the journal (dir/allocations.journal) holds. No
// checkpoint and no journal is (nil, nil): a first start. Anything
// unreadable is a *CorruptError.
//
// The files must be the regular files the daemon's own writes left: a
// link (dangling or not: a dangling one read as "no checkpoint" once
// started the daemon empty), a FIFO (which blocked the start) or a device
// is a *CorruptError, and so is a checkpoint over maxCheckpointBytes (a
// 1 GiB sparse file once cost 1 GiB of memory) or a journal over
// maxJournalBytes.
func ReadCheckpoint(dir string) (*Checkpoint, error) {
	root := fsutil.NewRoot(dir)
	raw, err := readStateFile(root, CheckpointName, maxCheckpointBytes)
	if err != nil {
		return nil, err
	}
	var cp *Checkpoint
	if raw != nil {
		var reason string
		if cp, reason = decodeCheckpoint(raw); reason != "" {
			return nil, &CorruptError{Path: root.Path(CheckpointName), Reason: reason}
		}
	}
	journal, err := readStateFile(root, JournalName, maxJournalBytes)
	if err != nil {
		return nil, err
	}
	last, reason := lastRecord(journal)
	if reason != "" {
		return nil, &CorruptError{Path: root.Path(JournalName), Reason: reason}
	}
	if last == nil || (cp != nil && last.Generation <= cp.Generation) {
		// Records up to the checkpoint's generation are left by a
		// compaction that did not get to empty the journal.
		return cp, nil
	}
	if cp != nil && last.Partition != cp.Partition {
		return nil, &CorruptError{Path: root.Path(JournalName), Reason: fmt.Sprintf("its states are of partition %q, the checkpoint's of %q", last.Partition, cp.Partition)}
	}
	return last, nil
}

// readStateFile reads the state file name; nil when it does not exist.
func readStateFile(root fsutil.Root, name string, limit int64) ([]byte, error) {
	raw, err := root.ReadFile(name, limit)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	var link *fsutil.SymlinkError
	var irregular *fsutil.NotRegularError
	if errors.As(err, &link) || errors.As(err, &irregular) || errors.Is(err, fsutil.ErrTooLarge) {
		return nil, &CorruptError{Path: root.Path(name), Reason: err.Error()}
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", root.Path(name), err)
	}
	return raw, nil
}

// lastRecord is the last state of a journal: one envelope a line, each
// appended and fdatasync'd before its change was answered. A crash in
// the middle of an append leaves an incomplete or unreadable tail: it
// was never acknowledged, and is ignored (the next write replaces the
// journal). A bad record followed by a good one is no torn tail: the
// journal is corrupted.
func lastRecord(journal []byte) (*Checkpoint, string) {
	var last *Checkpoint
	bad := ""
	for n := 1; len(journal) > 0; n++ {
		line, rest, complete := bytes.Cut(journal, []byte("\n"))
		journal = rest
		cp, reason := decodeCheckpoint(line)
		if !complete && reason == "" {
			reason = "no end of line"
		}
		switch {
		case reason != "" && bad == "":
			bad = fmt.Sprintf("record %d: %s", n, reason)
		case reason == "" && bad != "":
			return nil, bad + ", and valid records follow it"
		case reason == "":
			if last != nil && cp.Generation <= last.Generation {
				return nil, fmt.Sprintf("record %d: generation %d after %d", n, cp.Generation, last.Generation)
			}
			last = cp
		}
	}
	return last, ""
}

// decodeCheckpoint checks and decodes one envelope; reason says why it
// cannot be trusted.
func decodeCheckpoint(raw []byte) (cp *Checkpoint, reason string) {
	var f checkpointFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Sprintf("not valid JSON (%v)", err)
	}
	if f.Version != checkpointVersion {
		return nil, fmt.Sprintf("format version %d, this binary reads version %d", f.Version, checkpointVersion)
	}
	if len(f.Data) == 0 {
		return nil, "no data"
	}
	sum, err := checksum(f.Data)
	if err != nil {
		return nil, fmt.Sprintf("data is not valid JSON (%v)", err)
	}
	if sum != f.Checksum {
		return nil, fmt.Sprintf("checksum mismatch: file says %q, content is %q", f.Checksum, sum)
	}
	cp = &Checkpoint{}
	dec := json.NewDecoder(bytes.NewReader(f.Data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cp); err != nil {
		return nil, fmt.Sprintf("data does not decode (%v)", err)
	}
	if cp.Digests == nil {
		cp.Digests = map[types.UID]string{}
	}
	return cp, ""
}

// RemoveStaleTemps deletes temp files of writes a crash interrupted; they
// were never renamed, so they hold nothing that was acknowledged.
func RemoveStaleTemps(dir string) error {
	if _, err := fsutil.NewRoot(dir).RemoveTemps(CheckpointName); err != nil {
		return fmt.Errorf("removing stale checkpoint temp files: %w", err)
	}
	return nil
}

// LockStateDir takes an exclusive flock on dir/lock so two daemons (or a
// daemon and `allocator reset-state`) never share a state directory. The
// kernel drops the lock when the process dies, SIGKILL included.
func LockStateDir(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, lockName)
	l, err := fsutil.TryLock(path, 0o600, "")
	if errors.Is(err, fsutil.ErrLocked) {
		return nil, fmt.Errorf("state directory %s is in use by another allocator daemon (lock %s held)", dir, path)
	}
	if err != nil {
		return nil, err
	}
	return func() { _ = l.Release() }, nil
}

// journal makes each change durable with one append and one fdatasync to
// dir/allocations.journal, a whole state per record, instead of the
// checkpoint's temp file, fsync, rename and directory fsync. Every
// journalMaxRecords records (or journalMaxBytes) and at the first write
// of each run, it compacts instead: the state is written as the
// checkpoint (WriteCheckpoint, atomic) and the journal emptied. The first
// write of a run compacting means nothing is ever appended after the
// torn tail a crash may have left. Not safe for concurrent use: the
// server writes one state at a time.
type journal struct {
	dir        string
	maxRecords int
	f          *os.File // open for appending; nil: the next write compacts
	size       int64
	records    int
	// appends and compactions count the durable writes made: one of
	// them per write (TestOneDurableWritePerDecision).
	appends, compactions uint64
}

// Compaction thresholds: 64 records amortize the checkpoint's rename
// and two fsyncs; 8 MiB bounds the journal of large states.
const (
	journalMaxRecords = 64
	journalMaxBytes   = 8 << 20
)

func newJournal(dir string) *journal {
	return &journal{dir: dir, maxRecords: journalMaxRecords}
}

// write makes cp durable: an append, or a compaction. When it fails,
// the durable state is the previous one (an append that failed is cut
// off the journal; if even that fails the journal is closed, and the
// next write compacts).
func (j *journal) write(cp *Checkpoint) error {
	if j.f == nil || j.records >= j.maxRecords || j.size >= journalMaxBytes {
		return j.compact(cp)
	}
	rec, err := encodeCheckpoint(cp)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(rec); err != nil {
		return j.undo(fmt.Errorf("appending to %s: %w", j.f.Name(), err))
	}
	if err := unix.Fdatasync(int(j.f.Fd())); err != nil {
		return j.undo(fmt.Errorf("fdatasync %s: %w", j.f.Name(), err))
	}
	j.size += int64(len(rec))
	j.records++
	j.appends++
	return nil
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
