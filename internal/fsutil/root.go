package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Root is a directory that every path given to its methods stays inside,
// whatever symbolic links below it say: apply's --root (a sandbox, an
// image, /proc/<pid>/root) and "/" on a host. Paths are relative to it
// (a leading "/" is ignored). It is modelled on prometheus/procfs's FS,
// a value naming a mount point. NewRoot's opens the root afresh at each
// call and needs no Close; OpenRoot's opens it once, for a reader of
// many files (discovery), and is closed by its Close.
//
// Resolution is openat2(2)'s RESOLVE_IN_ROOT: ".." stops at the root and
// an absolute symlink is read as relative to it, as a process chrooted
// there would see it, so /proc/<pid>/root's absolute links resolve inside
// that tree, not on the host. RESOLVE_NO_MAGICLINKS refuses /proc's
// fd-style links, which would jump anywhere. The last component is never
// followed (O_NOFOLLOW): a file numa-partition reads, writes or locks
// must be that file, not a link somewhere else.
type Root struct {
	dir     string
	held    *heldDir // OpenRoot's; nil: dir is opened at each call
	noLinks bool     // RefusingLinks: no link is followed on the way either
}

// heldDir is a root directory opened once. Calls resolve from fd under
// the read lock and Close takes the write lock, so a closed descriptor,
// whose number the kernel hands out again, is never resolved from.
type heldDir struct {
	mu sync.RWMutex
	fd int // -1 once closed
}

// NewRoot is the Root at dir ("" is "/").
func NewRoot(dir string) Root {
	if dir == "" {
		dir = "/"
	}
	return Root{dir: dir}
}

// OpenRoot is NewRoot with dir opened now, once: every call resolves from
// that descriptor instead of opening dir again (reopening it cost a
// discovery, thousands of reads, 40% of its time), and the tree is the
// directory dir named at this instant even if dir is renamed or replaced
// later. Close releases it; after Close every call fails (os.ErrClosed).
func OpenRoot(dir string) (Root, error) {
	r := NewRoot(dir)
	fd, err := openRootDir(r.dir)
	if err != nil {
		return Root{}, err
	}
	r.held = &heldDir{fd: fd}
	return r, nil
}

// Close releases an OpenRoot's directory, once it is no longer resolved
// from; a NewRoot has nothing to release.
func (r Root) Close() error {
	if r.held == nil {
		return nil
	}
	r.held.mu.Lock()
	defer r.held.mu.Unlock()
	if r.held.fd < 0 {
		return nil
	}
	err := unix.Close(r.held.fd)
	r.held.fd = -1
	if err != nil {
		return &os.PathError{Op: "close root", Path: r.dir, Err: err}
	}
	return nil
}

// openRootDir is how a root directory is opened: only to resolve from.
func openRootDir(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open root", Path: dir, Err: err}
	}
	return fd, nil
}

// Dir is the root's own path.
func (r Root) Dir() string { return r.dir }

// Path is rel below the root, as errors and messages name it.
func (r Root) Path(rel string) string { return filepath.Join(r.dir, clean(rel)) }

// clean makes rel relative to the root: "/etc/x" and "etc/x" are the same
// file, "" and "/" the root itself.
func clean(rel string) string {
	c := path.Clean("/" + rel)
	if c == "/" {
		return "."
	}
	return strings.TrimPrefix(c, "/")
}

// resolveInRoot is how every path below a Root is resolved.
const resolveInRoot = unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS

// RefusingLinks is r refusing every symbolic link below it, on the way to
// a path as well as at its end, instead of following it inside r: for a
// tree numa-partition makes itself (render --out), where no link is
// legitimate and one can only have been planted, by whoever else can
// write there, while it writes. Confining such a link inside r would
// still write where its planter chose.
func (r Root) RefusingLinks() Root {
	r.noLinks = true
	return r
}

// resolve is how r resolves a path below it (openat2's resolve flags).
func (r Root) resolve() uint64 {
	if r.noLinks {
		return resolveInRoot | unix.RESOLVE_NO_SYMLINKS
	}
	return resolveInRoot
}

// SymlinkError says the last component of a path numa-partition would
// read, write or lock is a symbolic link, which it does not follow, or,
// below a RefusingLinks root, that a link is on the way to it (OnTheWay).
type SymlinkError struct {
	Path, Root string
	OnTheWay   bool
}

func (e *SymlinkError) Error() string {
	if e.OnTheWay {
		return fmt.Sprintf("%s: a symbolic link is on the way to it: refusing to follow it (nothing below %s may be a link: numa-partition makes every directory there itself)", e.Path, e.Root)
	}
	return fmt.Sprintf("%s is a symbolic link: refusing to follow it (what numa-partition reads, writes or locks under %s must be a regular file or directory there, not a link)", e.Path, e.Root)
}

// openat2 opens rel below the root with flags (O_CLOEXEC added) and, with
// O_CREAT, mode. It returns the raw descriptor and errors as
// *os.PathError naming the full path.
func (r Root) openat2(rel string, flags int, mode uint32) (int, error) {
	rel = clean(rel)
	if r.held != nil {
		r.held.mu.RLock()
		defer r.held.mu.RUnlock()
		if r.held.fd < 0 {
			return -1, &os.PathError{Op: "open", Path: r.Path(rel), Err: os.ErrClosed}
		}
		return r.openat2From(r.held.fd, rel, flags, mode)
	}
	rfd, err := openRootDir(r.dir)
	if err != nil {
		return -1, err
	}
	defer unix.Close(rfd)
	return r.openat2From(rfd, rel, flags, mode)
}

// openat2From is openat2 from the root's descriptor rfd; rel is clean.
func (r Root) openat2From(rfd int, rel string, flags int, mode uint32) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: r.resolve()}
	if flags&unix.O_CREAT != 0 {
		how.Mode = uint64(mode)
	}
	var fd int
	var err error
	// EAGAIN: a rename raced the ".." check of RESOLVE_IN_ROOT; the kernel
	// asks to try again.
	for range 16 {
		fd, err = unix.Openat2(rfd, rel, &how)
		if err != unix.EAGAIN && err != unix.EINTR {
			break
		}
	}
	if errors.Is(err, unix.ENOSYS) {
		fd, err = r.openWithoutOpenat2(rel, flags, mode)
	}
	if err == nil {
		return fd, nil
	}
	if errors.Is(err, unix.ELOOP) && flags&unix.O_NOFOLLOW != 0 && r.isSymlink(rfd, rel) {
		return -1, &SymlinkError{Path: r.Path(rel), Root: r.dir}
	}
	if errors.Is(err, unix.ELOOP) && r.noLinks {
		return -1, &SymlinkError{Path: r.Path(rel), Root: r.dir, OnTheWay: true}
	}
	return -1, &os.PathError{Op: "open", Path: r.Path(rel), Err: err}
}

// openWithoutOpenat2 is for kernels before 5.6: below "/" a plain openat
// is the same resolution (but for magic links); below any other root, or
// refusing links, there is no safe way without openat2, so it is refused.
func (r Root) openWithoutOpenat2(rel string, flags int, mode uint32) (int, error) {
	if filepath.Clean(r.dir) != "/" || r.noLinks {
		return -1, fmt.Errorf("this kernel has no openat2(2) (Linux 5.6 or later), which keeps every path inside --root %s: %w", r.dir, unix.ENOSYS)
	}
	return unix.Openat(unix.AT_FDCWD, "/"+rel, flags|unix.O_CLOEXEC, mode)
}

// isSymlink says whether rel's last component is a symbolic link (after
// an ELOOP, which too many links on the way also give).
func (r Root) isSymlink(rfd int, rel string) bool {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: r.resolve()}
	fd, err := unix.Openat2(rfd, rel, &how)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// Open opens rel below the root with os.OpenFile's flags, never following
// its last component and never blocking on a FIFO (O_NONBLOCK, which a
// regular file ignores).
func (r Root) Open(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	flag |= unix.O_NOFOLLOW
	if flag&unix.O_PATH == 0 { // openat2 refuses any other flag with O_PATH
		flag |= unix.O_NONBLOCK | unix.O_NOCTTY
	}
	fd, err := r.openat2(rel, flag, uint32(perm.Perm()))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), r.Path(rel)), nil
}

// ReadFile reads the regular file rel of at most limit bytes (ReadBounded).
func (r Root) ReadFile(rel string, limit int64) ([]byte, error) {
	return r.readFile(rel, unix.O_NOFOLLOW, limit)
}

// readFile reads rel, opened with Open's flags (follow: 0 or O_NOFOLLOW),
// on its raw descriptor: an *os.File would register it with the runtime's
// poller, two system calls more a file.
func (r Root) readFile(rel string, follow int, limit int64) ([]byte, error) {
	fd, err := r.openat2(rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|follow, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	return readBoundedFD(fd, func() string { return r.Path(rel) }, limit)
}

// ReadFileFollow is ReadFile for a file that may be a link, such as a
// kubelet's kubelet-client-current.pem: the link is followed, inside the
// root like every link on the way.
func (r Root) ReadFileFollow(rel string, limit int64) ([]byte, error) {
	return r.readFile(rel, 0, limit)
}

// OpenDir opens the directory rel (a link to a directory is followed
// inside the root): for what only a path can reach, such as a Unix
// socket, named "/proc/self/fd/N/name" through it.
func (r Root) OpenDir(rel string) (*os.File, error) {
	fd, err := r.openDir(rel)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), r.Path(rel)), nil
}

// SocketPath is a path that reaches the Unix socket rel below the root
// without leaving it: its directory opened through the Root, the socket
// named through that descriptor (/proc/self/fd/N/name, short enough for
// sun_path whatever the root is). A link at the socket's own name is
// refused (connect would follow it). Connect before calling done, which
// closes the directory.
func (r Root) SocketPath(rel string) (sock string, done func(), err error) {
	if fi, err := r.Lstat(rel); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return "", nil, &SymlinkError{Path: r.Path(rel), Root: r.dir}
	}
	d, err := r.OpenDir(path.Dir(path.Clean("/" + rel)))
	if err != nil {
		return "", nil, err
	}
	return fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), path.Base(rel)), func() { d.Close() }, nil
}

// Lstat describes rel itself (a symbolic link as a link).
func (r Root) Lstat(rel string) (fs.FileInfo, error) {
	fd, err := r.openat2(rel, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), r.Path(rel))
	defer f.Close()
	return f.Stat()
}

// Stat describes rel, a link at its end (and every link on the way)
// followed inside the root, never out of it: for a file a unit will run
// (a kubelet binary installed as a link), which the kernel reaches the
// same way for a process chrooted there. Nothing is read.
func (r Root) Stat(rel string) (fs.FileInfo, error) {
	fd, err := r.openat2(rel, unix.O_PATH, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), r.Path(rel))
	defer f.Close()
	return f.Stat()
}

// ReadDir lists the directory rel, sorted by name. A link to a directory
// is followed inside the root, as on the way to any file.
func (r Root) ReadDir(rel string) ([]fs.DirEntry, error) {
	fd, err := r.openDir(rel)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), r.Path(rel))
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	sortEntries(entries)
	return entries, nil
}
