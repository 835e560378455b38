// Package fsutil is the one way numa-partition replaces a file (atomic
// and durable: apply's files and record, the allocator's checkpoint), the
// one way it locks one (apply's host lock, the daemon's state dir), the
// one way it reads one (bounded, regular files only) and the one way it
// stays inside a root directory (Root).
package fsutil

import (
	"fmt"
	"io/fs"
	"path/filepath"
)

// TempPattern is the name of WriteFile's temporary file next to name
// (os.CreateTemp's pattern): what a crash between the write and the rename
// leaves behind.
func TempPattern(name string) string { return "." + filepath.Base(name) + ".numa-partition-*" }

// WriteFile replaces path atomically and durably (Root.WriteFile, below
// "/": no magic link is followed, nor a symlink as the temporary file).
func WriteFile(path string, content []byte, mode fs.FileMode) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return NewRoot("/").WriteFile(abs, content, mode)
}

// SyncDir makes a directory's entries durable (a rename, a removal).
// Filesystems that cannot sync a directory are not an error.
func SyncDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return NewRoot("/").SyncDir(abs)
}
