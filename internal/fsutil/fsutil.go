// Package fsutil is the one way numa-partition replaces a file (atomic
// and durable: apply's files and record, the allocator's checkpoint) and
// the one way it locks one (apply's host lock, the daemon's state dir).
package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// TempPattern is the name of WriteFile's temporary file next to name
// (os.CreateTemp's pattern): what a crash between the write and the rename
// leaves behind.
func TempPattern(name string) string { return "." + filepath.Base(name) + ".numa-partition-*" }

// WriteFile replaces path with content so that a reader, or a crash, sees
// the old file or the new one, never a mix: a temporary file in the same
// directory, fsync, rename, fsync of the directory. The directory is made
// when missing.
func WriteFile(path string, content []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, TempPattern(path))
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
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", name, err)
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	return SyncDir(dir)
}

// SyncDir makes a directory's entries durable (a rename, a removal).
// Filesystems that cannot sync a directory are not an error.
func SyncDir(dir string) error {
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
