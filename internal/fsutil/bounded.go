package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// ErrTooLarge says a file is larger than its reader accepts.
var ErrTooLarge = errors.New("larger than allowed")

// NotRegularError says a path that must be a regular file is something
// else: a FIFO (which would block the reader), a device (which may never
// end), a directory or a socket.
type NotRegularError struct {
	Path string
	Mode os.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is not a regular file (%s): refusing to read it", e.Path, DescribeMode(e.Mode))
}

// DescribeMode names a file mode's type for a message ("a FIFO", "a
// directory", ...).
func DescribeMode(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	}
	return m.Type().String()
}

// fileType is the fs.FileMode type bits of a stat(2) mode.
func fileType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFREG:
		return 0
	}
	return fs.ModeIrregular
}

// ReadFileBounded reads a regular file of at most limit bytes. The open
// never blocks (O_NONBLOCK: a FIFO with no writer would), anything but a
// regular file is a *NotRegularError before a byte is read, and a file
// that grows past limit while it is read is ErrTooLarge, never a partial
// read taken for the whole.
func ReadFileBounded(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadBounded(f, path, limit)
}

// ReadBounded reads an open file as ReadFileBounded does; name is what
// errors call it. A file's size refuses it before a byte is read (a 1 GiB
// sparse file costs nothing) where the size is its content; on sysfs,
// procfs and cgroupfs, whose files say 4096 or 0 whatever they hold, the
// size limit is enforced by the read alone.
func ReadBounded(f *os.File, name string, limit int64) ([]byte, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	var b []byte
	var readErr error
	// The descriptor as it is (f.Fd would make it blocking); fn is the
	// whole read, so it is never asked to wait for readiness.
	if err := rc.Read(func(fd uintptr) bool {
		b, readErr = readBoundedFD(int(fd), func() string { return name }, limit)
		return true
	}); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return b, readErr
}

// readBoundedFD is the one bounded read, on a raw descriptor (Root's reads
// have no *os.File); name is called only for an error.
func readBoundedFD(fd int, name func() string, limit int64) ([]byte, error) {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstat(fd, &st) }); err != nil {
		return nil, &os.PathError{Op: "stat", Path: name(), Err: err}
	}
	if typ := fileType(st.Mode); typ != 0 {
		return nil, &NotRegularError{Path: name(), Mode: typ | fs.FileMode(st.Mode&0o777)}
	}
	if st.Size > limit && sizeIsContent(fd) {
		return nil, fmt.Errorf("%s is %d bytes, %w (%d bytes at most)", name(), st.Size, ErrTooLarge, limit)
	}
	// One read for what the size says (sysfs' 4096 included), one more to
	// see the end; grown as io.ReadAll grows, never past limit+1.
	b := make([]byte, 0, min(max(st.Size, 512)+1, limit+1))
	for {
		if len(b) == cap(b) {
			if int64(len(b)) > limit {
				return nil, fmt.Errorf("%s grew past %d bytes while read: %w", name(), limit, ErrTooLarge)
			}
			b = slices.Grow(b, int(min(int64(cap(b)), limit+1-int64(len(b)))))
		}
		var n int
		err := ignoringEINTR(func() error {
			var err error
			n, err = unix.Read(fd, b[len(b):cap(b)])
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name(), err)
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// ignoringEINTR retries a system call a signal interrupted.
func ignoringEINTR(call func() error) error {
	for {
		if err := call(); err != unix.EINTR {
			return err
		}
	}
}

// pseudoFS are the filesystems whose files report a size that is not
// their content (sysfs: 4096, procfs and cgroupfs: 0).
var pseudoFS = map[int64]bool{
	unix.SYSFS_MAGIC:         true,
	unix.PROC_SUPER_MAGIC:    true,
	unix.CGROUP_SUPER_MAGIC:  true,
	unix.CGROUP2_SUPER_MAGIC: true,
	unix.DEBUGFS_MAGIC:       true,
	unix.TRACEFS_MAGIC:       true,
	unix.SECURITYFS_MAGIC:    true,
}

// sizeIsContent says whether fd's stat size is what a read returns. When
// fstatfs fails the size is trusted: refusing too much is the safe side.
func sizeIsContent(fd int) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return true
	}
	return !pseudoFS[int64(st.Type)]
}
