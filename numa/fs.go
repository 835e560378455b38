package numa

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// FS is a sysfs tree rooted at a path: the live /sys or a dump's sys/
// directory. Like prometheus/procfs, it reads files only when asked and
// returns every error with the path it concerns.
//
// prometheus/procfs v0.23.0 is not used for the files discovery reads, for
// reasons found in its source: its sysfs reader stops at 128 bytes without
// saying so (a long cpulist would be cut), trims whitespace but not the
// trailing NUL some kernels write, CPU.Topology fails as a whole when
// core_siblings_list or thread_siblings_list is absent (old kernels and
// dumps have only core_id and physical_package_id), CPU.Online takes any
// content but "1" as offline, PciDevices needs class, vendor, device,
// subsystem ids and revision for every device and a symlink per device
// (dumps keep numa_node only), and it has no parser for node meminfo
// ("Node 0 MemTotal: ... kB", with a leading blank line on old kernels).
type FS struct {
	root string
	ctx  context.Context // nil: never cancelled
	// tree is the root held open for one Discover (fsutil.OpenRoot):
	// every file is resolved from one descriptor of the root.
	tree fsutil.Root
	// cpus bounds the CPU ids of every CPU list and mask discovery
	// reads (readCPUBound, once per Discover); the zero value bounds
	// nothing beyond bitmask.MaxCPUs.
	cpus cpuBound
	// afterRead, when set (tests), runs after each file is read: a
	// kernel changing the tree between two reads.
	afterRead func(path string)
}

// NewFS returns the sysfs tree at root, e.g. "/sys" or
// "testdata/sysfs/<machine>/sys". Nothing is read until Discover.
func NewFS(root string) FS { return FS{root: root} }

// WithContext returns the FS reading until ctx is done: discovery stops at
// its next file with ctx's error (SIGTERM on a huge or slow tree).
func (f FS) WithContext(ctx context.Context) FS {
	f.ctx = ctx
	return f
}

// Root is the path the FS was created with.
func (f FS) Root() string { return f.root }

// maxFileSize bounds what is read from one file: sysfs values are short,
// and a dump with a huge file must not exhaust memory.
const maxFileSize = 1 << 20

// FileError is a sysfs file whose content is not what the kernel writes.
type FileError struct {
	Path    string // full path of the file
	Content string // the content as read, possibly shortened
	Err     error  // what is wrong with it
}

func (e *FileError) Error() string {
	return fmt.Sprintf("%s: invalid content %q: %v", e.Path, e.Content, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// rel shortens a path under the root for warnings.
func (f FS) rel(path string) string {
	if r, err := filepath.Rel(f.root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func (f FS) path(elem ...string) string {
	return filepath.Join(append([]string{f.root}, elem...)...)
}

// read returns the content of a file with surrounding whitespace and NULs
// removed; ok is false when the file does not exist.
func (f FS) read(path string) (value string, ok bool, err error) {
	if f.ctx != nil {
		if err := f.ctx.Err(); err != nil {
			return "", false, fmt.Errorf("reading %s: %w", path, err)
		}
	}
	rel, err := f.below(path)
	if err != nil {
		return "", false, err
	}
	// fsutil's bounded read, inside the tree: no link followed out of it
	// (a sysfs under --root, or a dump, stays that tree; its relative
	// links between devices resolve as in sysfs), no blocking on a FIFO
	// (a dump gone wrong, or a trap): sysfs attributes are regular files,
	// and anything else is refused before it is read.
	b, err := f.tree.ReadFile(rel, maxFileSize)
	if f.afterRead != nil {
		f.afterRead(path)
	}
	var irregular *fsutil.NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false, nil
	case errors.As(err, &irregular):
		return "", false, fmt.Errorf("reading %s: not a regular file (%s): sysfs values are files", path, irregular.Mode.Type())
	case errors.Is(err, fsutil.ErrTooLarge):
		return "", false, fmt.Errorf("reading %s: larger than %d bytes, not a sysfs value", path, maxFileSize)
	case err != nil:
		return "", false, fmt.Errorf("reading %s: %w", path, err)
	}
	return bitmask.Trim(string(b)), true, nil
}

// below is path relative to the FS's root; every path discovery reads
// is one of f.path's.
func (f FS) below(path string) (string, error) {
	rel, err := filepath.Rel(f.root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%s is not below the sysfs root %s", path, f.root)
	}
	return rel, nil
}

// readDir lists a directory of the tree, sorted by name, inside it.
func (f FS) readDir(dir string) ([]fs.DirEntry, error) {
	rel, err := f.below(dir)
	if err != nil {
		return nil, err
	}
	return f.tree.ReadDir(rel)
}

// readlink is the text of the link at path, not followed.
func (f FS) readlink(path string) (string, error) {
	rel, err := f.below(path)
	if err != nil {
		return "", err
	}
	return fsutil.NewRoot(f.root).Readlink(rel)
}

// lstat describes path itself, a link as a link.
func (f FS) lstat(path string) (fs.FileInfo, error) {
	rel, err := f.below(path)
	if err != nil {
		return nil, err
	}
	return fsutil.NewRoot(f.root).Lstat(rel)
}

func invalid(path, content string, err error) error {
	const maxShown = 200
	if len(content) > maxShown {
		content = content[:maxShown] + "..."
	}
	return &FileError{Path: path, Content: content, Err: err}
}

// readCPUList reads a file in the kernel list form ("0-3,8-11").
func (f FS) readCPUList(path string) (bitmask.CPUSet, bool, error) {
	s, ok, err := f.read(path)
	if err != nil || !ok {
		return bitmask.CPUSet{}, ok, err
	}
	set, err := bitmask.ParseCPUList(s)
	if err == nil {
		err = f.cpus.check(set)
	}
	if err != nil {
		return bitmask.CPUSet{}, false, invalid(path, s, err)
	}
	return set, true, nil
}

// readCPUMask reads a file in the kernel hex mask form ("ff,000000ff").
func (f FS) readCPUMask(path string) (bitmask.CPUSet, bool, error) {
	s, ok, err := f.read(path)
	if err != nil || !ok {
		return bitmask.CPUSet{}, ok, err
	}
	set, err := bitmask.ParseCPUMask(s)
	if err == nil {
		err = f.cpus.check(set)
	}
	if err != nil {
		return bitmask.CPUSet{}, false, invalid(path, s, err)
	}
	return set, true, nil
}

// readCPUs reads the list file, or the mask file when the list is absent
// (kernels before 2.6.26 have no *_list files). When both exist and
// disagree, the list wins and mismatch says so: only edited dumps do that.
func (f FS) readCPUs(listPath, maskPath string) (set bitmask.CPUSet, ok bool, mismatch string, err error) {
	list, listOK, err := f.readCPUList(listPath)
	if err != nil {
		return bitmask.CPUSet{}, false, "", err
	}
	mask, maskOK, err := f.readCPUMask(maskPath)
	if err != nil {
		return bitmask.CPUSet{}, false, "", err
	}
	switch {
	case listOK && maskOK && !list.Equal(mask):
		return list, true, fmt.Sprintf("%s says %q but %s says %q; using the list", f.rel(listPath), list.String(), filepath.Base(maskPath), mask.String()), nil
	case listOK:
		return list, true, "", nil
	default:
		return mask, maskOK, "", nil
	}
}

// readNodeList reads a node list file ("0-1,4").
func (f FS) readNodeList(path string) (bitmask.NodeSet, bool, error) {
	s, ok, err := f.read(path)
	if err != nil || !ok {
		return bitmask.NodeSet{}, ok, err
	}
	set, err := bitmask.ParseNodeList(s)
	if err != nil {
		return bitmask.NodeSet{}, false, invalid(path, s, err)
	}
	return set, true, nil
}

// readInt reads a decimal integer within [lo, hi].
func (f FS) readInt(path string, lo, hi int64) (int64, bool, error) {
	s, ok, err := f.read(path)
	if err != nil || !ok {
		return 0, ok, err
	}
	n, err := parseDecimal(s, lo, hi)
	if err != nil {
		return 0, false, invalid(path, s, err)
	}
	return n, true, nil
}

// parseDecimal accepts what the kernel's %d writes: an optional minus and
// digits without leading zeros.
func parseDecimal(s string, lo, hi int64) (int64, error) {
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if digits == "" || (len(digits) > 1 && digits[0] == '0') || digits[0] < '0' || digits[0] > '9' {
		return 0, fmt.Errorf("not a decimal integer")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a decimal integer")
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%d is out of range (allowed %d..%d)", n, lo, hi)
	}
	return n, nil
}

// readUint reads a non-negative decimal count.
func (f FS) readUint(path string) (uint64, bool, error) {
	s, ok, err := f.read(path)
	if err != nil || !ok {
		return 0, ok, err
	}
	if s == "" || (len(s) > 1 && s[0] == '0') || s[0] < '0' || s[0] > '9' {
		return 0, false, invalid(path, s, fmt.Errorf("not a non-negative decimal integer"))
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false, invalid(path, s, fmt.Errorf("not a non-negative decimal integer"))
	}
	return n, true, nil
}

// idDirs lists the entries of dir named prefix+N (cpu0, node12) and
// returns N ascending; other entries (cpufreq, has_cpu) are not ids.
func (f FS) idDirs(dir, prefix string, limit int) ([]int, bool, error) {
	entries, err := f.readDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("listing %s: %w", dir, err)
	}
	ids, err := IDsNamed(entries, prefix, limit)
	if err != nil {
		return nil, false, fmt.Errorf("%s/%w", dir, err)
	}
	return ids, true, nil
}

// IDsNamed are the N of the entries named prefix+N (cpu0, node12) below
// limit, ascending; other entries (cpufreq, has_cpu) are not ids, and one
// named prefix and a digit but not a decimal id is an error naming it.
// The one reader of sysfs's numbered directories, discovery's and the
// node view's.
func IDsNamed(entries []fs.DirEntry, prefix string, limit int) ([]int, error) {
	var ids []int
	for _, e := range entries {
		name := e.Name()
		if len(name) <= len(prefix) || name[:len(prefix)] != prefix {
			continue
		}
		num := name[len(prefix):]
		if num[0] < '0' || num[0] > '9' {
			continue // cpufreq, cpuidle
		}
		n, err := parseDecimal(num, 0, int64(limit-1))
		if err != nil {
			return nil, fmt.Errorf("%s: not %s<id>: %w", name, prefix, err)
		}
		ids = append(ids, int(n))
	}
	// os.ReadDir sorts by name; ids must be numeric order.
	slices.Sort(ids)
	return ids, nil
}
