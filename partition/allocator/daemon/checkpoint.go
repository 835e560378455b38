package daemon

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/partition/allocator"
)

// CheckpointName is the state file inside the state directory, and
// JournalName the changes written since it (see journal).
const (
	CheckpointName = "allocations.json"
	JournalName    = "allocations.journal"
)

const (
	// checkpointVersion is the envelope of a whole state: the checkpoint,
	// and the journal's records before deltas (deltaVersion).
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

// CorruptError is a checkpoint or journal that exists but cannot be
// trusted. The daemon refuses to start on it: starting empty would hand
// out memory that running pods already own.
type CorruptError struct {
	Path   string
	Reason string
}

func (e *CorruptError) Error() string {
	what := "checkpoint"
	if filepath.Base(e.Path) == JournalName {
		what = "journal"
	}
	return fmt.Sprintf("%s %s is corrupted: %s", what, e.Path, e.Reason)
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
// content (and a journal record of older binaries).
func encodeCheckpoint(cp *Checkpoint) ([]byte, error) {
	return encodeEnvelope(checkpointVersion, cp)
}

// encodeEnvelope is v's envelope of the given version, one line.
func encodeEnvelope(version int, v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding checkpoint: %w", err)
	}
	// json.Marshal's output is already compact (and has no newline): hash
	// it as it is, and write the envelope by hand rather than re-encoding
	// (and re-scanning) the data, which is most of the cost of a large
	// state.
	sum := sha256.Sum256(data)
	out := make([]byte, 0, len(data)+128)
	out = fmt.Appendf(out, `{"version":%d,"checksum":"sha256:%s","data":`, version, hex.EncodeToString(sum[:]))
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
	cp, reason := replay(cp, journal)
	if reason != "" {
		return nil, &CorruptError{Path: root.Path(JournalName), Reason: reason}
	}
	return cp, nil
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

// decodeCheckpoint checks and decodes one envelope of a whole state;
// reason says why it cannot be trusted.
func decodeCheckpoint(raw []byte) (cp *Checkpoint, reason string) {
	version, data, reason := openEnvelope(raw)
	switch {
	case reason != "":
		return nil, reason
	case version != checkpointVersion:
		return nil, fmt.Sprintf("format version %d, this binary reads version %d", version, checkpointVersion)
	}
	return decodeState(data)
}

// openEnvelope checks an envelope's checksum and returns its version and
// data; reason says why it cannot be trusted.
func openEnvelope(raw []byte) (version int, data json.RawMessage, reason string) {
	var f checkpointFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, nil, fmt.Sprintf("not valid JSON (%v)", err)
	}
	if f.Version != checkpointVersion && f.Version != deltaVersion {
		return 0, nil, fmt.Sprintf("format version %d, this binary reads versions %d and %d", f.Version, checkpointVersion, deltaVersion)
	}
	if len(f.Data) == 0 {
		return 0, nil, "no data"
	}
	sum, err := checksum(f.Data)
	if err != nil {
		return 0, nil, fmt.Sprintf("data is not valid JSON (%v)", err)
	}
	if sum != f.Checksum {
		return 0, nil, fmt.Sprintf("checksum mismatch: file says %q, content is %q", f.Checksum, sum)
	}
	return f.Version, f.Data, ""
}

// decodeState decodes a whole state, strictly.
func decodeState(data []byte) (*Checkpoint, string) {
	cp := &Checkpoint{}
	if reason := decodeStrict(data, cp); reason != "" {
		return nil, reason
	}
	if cp.Digests == nil {
		cp.Digests = map[types.UID]string{}
	}
	return cp, ""
}

// decodeStrict decodes data into v, refusing unknown fields.
func decodeStrict(data []byte, v any) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Sprintf("data does not decode (%v)", err)
	}
	return ""
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
