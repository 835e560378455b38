package apply

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// writeFileAtomic replaces path atomically and durably (fsutil).
func writeFileAtomic(path string, content []byte, mode fs.FileMode) error {
	return fsutil.WriteFile(path, content, mode)
}

// removeFile removes path (a missing file is fine) and syncs its directory.
func removeFile(path string) error {
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Nothing to remove (an apply killed before it wrote the file):
		// sync the directory only if it exists.
		if _, serr := os.Stat(filepath.Dir(path)); errors.Is(serr, fs.ErrNotExist) {
			return nil
		}
	} else if err != nil {
		return err
	}
	return fsutil.SyncDir(filepath.Dir(path))
}

// readFileState reads a file; ok is false when it does not exist.
func readFileState(path string) (FileState, bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return FileState{}, false, nil
	}
	if err != nil {
		return FileState{}, false, err
	}
	if !fi.Mode().IsRegular() {
		return FileState{}, false, fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return FileState{}, false, err
	}
	return FileState{Content: b, Mode: fi.Mode().Perm()}, true, nil
}
