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

	"k8s.io/apimachinery/pkg/types"

	"github.com/numa-partition/numa-partition/partition/allocator"
)

// CheckpointName is the state file inside the state directory.
const CheckpointName = "allocations.json"

const (
	checkpointVersion = 1
	lockName          = "lock"
)

// tempPattern is what an interrupted write leaves (fsutil.WriteFile).
var tempPattern = fsutil.TempPattern(CheckpointName)

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
	data, err := json.Marshal(cp)
	if err != nil {
		return fmt.Errorf("encoding checkpoint: %w", err)
	}
	// json.Marshal's output is already compact: hash it as it is, and
	// write the envelope by hand rather than re-encoding (and re-scanning)
	// the data, which is most of the cost of a large state.
	sum := sha256.Sum256(data)
	out := make([]byte, 0, len(data)+128)
	out = fmt.Appendf(out, `{"version":%d,"checksum":"sha256:%s","data":`, checkpointVersion, hex.EncodeToString(sum[:]))
	out = append(out, data...)
	out = append(out, "}\n"...)
	final := filepath.Join(dir, CheckpointName)
	if err := fsutil.WriteFile(final, out, 0o600); err != nil {
		return fmt.Errorf("writing checkpoint %s: %w", final, err)
	}
	return nil
}

// ReadCheckpoint loads dir/allocations.json. A missing file is
// (nil, nil): a first start. Anything unreadable is a *CorruptError.
func ReadCheckpoint(dir string) (*Checkpoint, error) {
	path := filepath.Join(dir, CheckpointName)
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint: %w", err)
	}
	var f checkpointFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, &CorruptError{Path: path, Reason: fmt.Sprintf("not valid JSON (%v)", err)}
	}
	if f.Version != checkpointVersion {
		return nil, &CorruptError{Path: path, Reason: fmt.Sprintf("format version %d, this binary reads version %d", f.Version, checkpointVersion)}
	}
	if len(f.Data) == 0 {
		return nil, &CorruptError{Path: path, Reason: "no data"}
	}
	sum, err := checksum(f.Data)
	if err != nil {
		return nil, &CorruptError{Path: path, Reason: fmt.Sprintf("data is not valid JSON (%v)", err)}
	}
	if sum != f.Checksum {
		return nil, &CorruptError{Path: path, Reason: fmt.Sprintf("checksum mismatch: file says %q, content is %q", f.Checksum, sum)}
	}
	var cp Checkpoint
	dec := json.NewDecoder(bytes.NewReader(f.Data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cp); err != nil {
		return nil, &CorruptError{Path: path, Reason: fmt.Sprintf("data does not decode (%v)", err)}
	}
	if cp.Digests == nil {
		cp.Digests = map[types.UID]string{}
	}
	return &cp, nil
}

// RemoveStaleTemps deletes temp files of writes a crash interrupted; they
// were never renamed, so they hold nothing that was acknowledged.
func RemoveStaleTemps(dir string) error {
	stale, err := filepath.Glob(filepath.Join(dir, tempPattern))
	if err != nil {
		return err
	}
	for _, f := range stale {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing stale checkpoint temp file: %w", err)
		}
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
