package nodeview

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// The hugepage half: which pools a partition's kubelet sees. kubelet
// cannot reserve hugepages, so render writes the partition's view of
// every pool file cAdvisor reads (kubeletgen/hugepageview.go: its own
// pages on its nodes, 0 elsewhere, their sum machine-wide) and ShowPools
// binds each over the sysfs file it stands for, in the partition's mount
// namespace.
//
// It runs at every start of the partition's kubelet (its ExecStartPre=,
// after ShowNodes), not in the holder's unit: a change of the partition's
// pools then restarts the kubelet with its new view while the holder, and
// with it the namespace and every pod's mounts, stays. A bind made by the
// holder would hold the file it was made with, so a new count would need a
// new namespace, and every pod of the partition would be re-created.

// GlobalPoolsDir is where the kernel lists the machine's pools, one
// directory a page size, relative to the host's root.
const GlobalPoolsDir = "sys/kernel/mm/hugepages"

// poolFile is the file of a pool directory cAdvisor reads.
const poolFile = "nr_hugepages"

// poolDirName is a page size's directory, as the kernel names it.
var poolDirName = regexp.MustCompile(`^hugepages-[0-9]+kB$`)

// maxPeel bounds how many binds ShowPools takes off one file: one a
// previous run made, more only if something else stacked them.
const maxPeel = 16

// ShowPools binds, below root and read-only, the file of view (a
// directory below root mirroring /sys) over each pool file the calling
// mount namespace shows: every page size's nr_hugepages of GlobalPoolsDir
// and of each NUMA node NodesDir lists (after ShowNodes, the partition's
// own). A bind a previous run left over a global file (the kubelet's
// previous start) is taken off first. A pool file the view lacks is an
// error, before anything is bound over it: the kubelet would see the
// machine's pages there. So is a node's pool that holds fewer pages than
// the view shows: the kubelet would offer pages that do not exist (the
// kernel came up short; apply warned). Nothing is reached through a
// symbolic link. It returns how many files it bound.
func ShowPools(root fsutil.Root, view string) (int, error) {
	targets, err := poolFiles(root)
	if err != nil {
		return 0, err
	}
	srcRels := make([]string, len(targets))
	sources := make([]*os.File, len(targets))
	defer func() {
		for _, f := range sources {
			if f != nil {
				f.Close()
			}
		}
	}()
	for i, t := range targets {
		src := path.Join(view, strings.TrimPrefix(t, "sys/"))
		f, err := openEnd(root, src)
		if errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("the hugepage view %s has no %s for %s: it was rendered for other page sizes or NUMA nodes than this machine has (plan and apply again)", root.Path(view), root.Path(src), root.Path(t))
		}
		if err != nil {
			return 0, fmt.Errorf("the hugepage view: %w", err)
		}
		srcRels[i], sources[i] = src, f
	}
	// The previous views off first: the kernel's counts are read below.
	for _, t := range targets {
		if err := peel(root, t); err != nil {
			return 0, err
		}
	}
	for i, t := range targets {
		if strings.HasPrefix(t, NodesDir+"/") {
			if err := checkFilled(root, t, srcRels[i]); err != nil {
				return 0, err
			}
		}
	}
	for i, t := range targets {
		dst, err := openEnd(root, t)
		if err != nil {
			return i, err
		}
		err = bindOver(root, sources[i], dst, t)
		dst.Close()
		if err != nil {
			return i, fmt.Errorf("binding %s over %s: %w", root.Path(srcRels[i]), root.Path(t), err)
		}
	}
	return len(targets), nil
}

// checkFilled: the kernel's pool at rel holds at least the pages the
// view's file shows there.
func checkFilled(root fsutil.Root, rel, view string) error {
	kernel, err := uintFile(root, rel)
	if err != nil {
		return err
	}
	shown, err := uintFile(root, view)
	if err != nil {
		return err
	}
	if kernel < shown {
		return fmt.Errorf("%s holds %d pages and the partition's hugepage view %d: the kernel did not fill the planned pool, and the kubelet would offer pages that do not exist (numa-partition status; free the node's memory or reserve the pages at boot, then apply again)", root.Path(rel), kernel, shown)
	}
	return nil
}

// poolFiles are the pool files the namespace shows: each page size's of
// GlobalPoolsDir, then of each node NodesDir lists. A node without a
// hugepages directory (one without memory) has none.
func poolFiles(root fsutil.Root) ([]string, error) {
	nodes, err := ShownNodes(root)
	if err != nil {
		return nil, err
	}
	dirs := []string{GlobalPoolsDir}
	for _, id := range nodes {
		dirs = append(dirs, path.Join(nodeRel(id), "hugepages"))
	}
	var files []string
	for _, dir := range dirs {
		entries, err := root.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) && dir != GlobalPoolsDir {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing the hugepage pools: %w", err)
		}
		for _, e := range entries {
			if e.IsDir() && poolDirName.MatchString(e.Name()) {
				files = append(files, path.Join(dir, e.Name(), poolFile))
			}
		}
	}
	return files, nil
}

// peel takes off rel what is mounted over it: a file on another device
// than its directory (the sysfs pool files are on sysfs, a view's file
// is not).
func peel(root fsutil.Root, rel string) error {
	for range maxPeel {
		f, err := openEnd(root, rel)
		if err != nil {
			return err
		}
		over, err := isMountPoint(root, rel, f)
		if err == nil && over {
			if err = unix.Unmount(fdPath(f.Fd()), unix.MNT_DETACH); err != nil {
				err = fmt.Errorf("taking the previous view off %s: %w", root.Path(rel), err)
			}
		}
		f.Close()
		if err != nil || !over {
			return err
		}
	}
	return fmt.Errorf("%s: more than %d mounts over it", root.Path(rel), maxPeel)
}
