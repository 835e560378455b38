package nodeview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/numa"
)

// MeminfoFile is the name of the live /proc/meminfo view in a served
// directory.
const MeminfoFile = "meminfo"

// Render makes a file's content at one open.
type Render func() ([]byte, error)

// Serve mounts at dir a read-only FUSE filesystem of files, each made
// anew by its render at every open (direct I/O: no cache and no size,
// like procfs), until the returned server is unmounted. The mount lets
// every user read (allow_other): node agents in the partition run as
// users of their own.
func Serve(dir string, files map[string]Render) (*fuse.Server, error) {
	root := &viewDir{files: files}
	srv, err := fs.Mount(dir, root, &fs.Options{
		MountOptions: fuse.MountOptions{
			AllowOther:  true,
			FsName:      "numa-partition-view",
			Name:        "numa-partition",
			DirectMount: true, // root mounts itself: no fusermount needed
		},
	})
	if err != nil {
		return nil, fmt.Errorf("mounting the view at %s: %w", dir, err)
	}
	return srv, nil
}

// viewDir is the served directory: its files, made at each open.
type viewDir struct {
	fs.Inode
	files map[string]Render
}

var _ = (fs.NodeOnAdder)((*viewDir)(nil))

func (d *viewDir) OnAdd(ctx context.Context) {
	for name, render := range d.files {
		ch := d.NewPersistentInode(ctx, &liveFile{name: name, render: render}, fs.StableAttr{Mode: fuse.S_IFREG})
		d.AddChild(name, ch, false)
	}
}

// liveFile is one file whose content is render's at each open.
type liveFile struct {
	fs.Inode
	name   string
	render Render
}

var (
	_ = (fs.NodeOpener)((*liveFile)(nil))
	_ = (fs.NodeGetattrer)((*liveFile)(nil))
)

func (f *liveFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = fuse.S_IFREG | 0o444
	return 0
}

func (f *liveFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&(syscall.O_WRONLY|syscall.O_RDWR) != 0 {
		return nil, 0, syscall.EROFS
	}
	b, err := f.render()
	if err != nil {
		// The reader gets EIO; why goes to the journal.
		slog.Error("view: cannot make "+f.name, "err", err)
		return nil, 0, syscall.EIO
	}
	return snapshot(b), fuse.FOPEN_DIRECT_IO, 0
}

// snapshot is what one open reads: the content made at open, so that a
// reader reading in pieces never sees two versions.
type snapshot []byte

var _ = (fs.FileReader)((snapshot)(nil))

func (s snapshot) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off >= int64(len(s)) {
		return fuse.ReadResultData(nil), 0
	}
	end := min(off+int64(len(dest)), int64(len(s)))
	return fuse.ReadResultData(s[off:end]), 0
}

// maxMeminfo bounds each read of a meminfo or memory.stat file: a few
// KiB on any kernel.
const maxMeminfo = 64 << 10

// MeminfoSource makes a partition's memory files (its meminfo, and its
// root memory cgroup's) from the host's /proc/meminfo, the host's root
// memory.stat and its nodes' meminfo below a root. The host's files are
// opened once, before anything is bound over them, and read again from
// their start at each call (the kernel makes them anew then): the holder
// serves its views over those very paths, and reading them by path would
// be a request to itself that never returns.
type MeminfoSource struct {
	root      fsutil.Root
	host      *os.File
	memcgStat *os.File // nil until OpenMemcg
}

// OpenMeminfoSource opens root's proc/meminfo for the source.
func OpenMeminfoSource(root fsutil.Root) (*MeminfoSource, error) {
	f, err := root.Open(MeminfoTarget, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	return &MeminfoSource{root: root, host: f}, nil
}

// OpenMemcg opens root's v1 root memory cgroup's memory.stat, for
// ShownMemcg; an error wrapping fs.ErrNotExist when the host has no v1
// memory controller.
func (s *MeminfoSource) OpenMemcg() error {
	f, err := s.root.Open(path.Join(MemcgDir, MemcgStatFile), os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	s.memcgStat = f
	return nil
}

// Close closes the host's files.
func (s *MeminfoSource) Close() error {
	err := s.host.Close()
	if s.memcgStat != nil {
		err = errors.Join(err, s.memcgStat.Close())
	}
	return err
}

// readFrom reads f, root's rel, from its start, bounded.
func (s *MeminfoSource) readFrom(f *os.File, rel string) ([]byte, error) {
	buf := make([]byte, maxMeminfo+1)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading %s: %w", s.root.Path(rel), err)
	}
	if n > maxMeminfo {
		return nil, fmt.Errorf("%s is over %d bytes", s.root.Path(rel), maxMeminfo)
	}
	return buf[:n], nil
}

// read reads the host's /proc/meminfo and each node's
// /sys/devices/system/node/node<N>/meminfo.
func (s *MeminfoSource) read(nodes []int) (host []byte, infos []numa.NodeMeminfo, err error) {
	host, err = s.readFrom(s.host, MeminfoTarget)
	if err != nil {
		return nil, nil, err
	}
	infos = make([]numa.NodeMeminfo, 0, len(nodes))
	for _, id := range nodes {
		rel := path.Join(nodeRel(id), "meminfo")
		b, err := s.root.ReadFile(rel, maxMeminfo)
		if err != nil {
			return nil, nil, err
		}
		m, err := numa.ParseNodeMeminfo(id, string(b))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", s.root.Path(rel), err)
		}
		infos = append(infos, m)
	}
	return host, infos, nil
}

// Nodes renders the meminfo of nodes at each call.
func (s *MeminfoSource) Nodes(nodes []int) Render {
	return func() ([]byte, error) {
		host, infos, err := s.read(nodes)
		if err != nil {
			return nil, err
		}
		return Meminfo(host, infos)
	}
}

// shown reads the NUMA nodes NodesDir lists: in the partition's
// namespace, those ShowNodes left at the kubelet's last start, so the
// holder serving their views never names them (a layout change restarts
// the kubelet, not the holder).
func (s *MeminfoSource) shown() ([]int, error) {
	ids, err := ShownNodes(s.root)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s lists no NUMA node", s.root.Path(NodesDir))
	}
	return ids, nil
}

// Shown renders, at each call, the meminfo of the NUMA nodes shown then.
func (s *MeminfoSource) Shown() Render {
	return func() ([]byte, error) {
		ids, err := s.shown()
		if err != nil {
			return nil, err
		}
		return s.Nodes(ids)()
	}
}

// ShownMemcg renders, at each call, the root memory cgroup's files
// (MemcgUsageFile, MemcgSwapUsageFile, MemcgStatFile) of the NUMA nodes
// shown then; OpenMemcg must have opened the host's memory.stat.
func (s *MeminfoSource) ShownMemcg() map[string]Render {
	sum := func() (host []byte, sum numa.NodeMeminfo, err error) {
		ids, err := s.shown()
		if err != nil {
			return nil, nil, err
		}
		host, infos, err := s.read(ids)
		if err != nil {
			return nil, nil, err
		}
		return host, sumNodes(infos), nil
	}
	return map[string]Render{
		MemcgUsageFile: func() ([]byte, error) {
			_, n, err := sum()
			if err != nil {
				return nil, err
			}
			return MemcgUsage(n), nil
		},
		MemcgSwapUsageFile: func() ([]byte, error) {
			host, n, err := sum()
			if err != nil {
				return nil, err
			}
			return MemcgSwapUsage(n, host)
		},
		MemcgStatFile: func() ([]byte, error) {
			_, n, err := sum()
			if err != nil {
				return nil, err
			}
			stat, err := s.readFrom(s.memcgStat, path.Join(MemcgDir, MemcgStatFile))
			if err != nil {
				return nil, err
			}
			return MemcgStat(stat, n)
		},
	}
}
