package apply

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// writeFileAtomic replaces path with content so that a reader (or a
// crash) sees either the old or the new file, never a mix: temp file in the
// same directory, fsync, rename, fsync of the directory.
func writeFileAtomic(path string, content []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".numa-partition-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(content); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
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
	return syncDir(filepath.Dir(path))
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
