// Command elfdeps prints what a dynamically linked program needs to run in
// an image built from an unpacked Debian root (dpkg -x): its ELF
// interpreter and the closure of its DT_NEEDED libraries, each as
// IMAGEPATH=FILE, ready for ocitar's -add:
//
//	elfdeps -root ROOT /usr/sbin/nft /usr/sbin/xtables-nft-multi
//	/lib/x86_64-linux-gnu/libc.so.6=ROOT/usr/lib/x86_64-linux-gnu/libc.so.6
//	/lib64/ld-linux-x86-64.so.2=ROOT/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
//	...
//
// The programs are paths inside ROOT. Libraries go in the image under the
// name they are asked for (their soname) in the folder the loader searches
// first; symbolic links are resolved inside ROOT (an absolute link means
// ROOT/target), so FILE is always a regular file. A library that is not in
// ROOT is an error: the image would not run.
package main

import (
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// searchDirs is where Debian's loader looks for a library (its built-in
// multiarch path, with no ld.so.cache in the image), in order.
var searchDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/lib", "/usr/lib"}

// libDir is the folder of the image where every library is put.
const libDir = "/lib/x86_64-linux-gnu"

// resolve follows symbolic links of the image path p inside root and
// returns the host path of the regular file it names.
func resolve(root, p string) (string, error) {
	for i := 0; i < 40; i++ {
		host := filepath.Join(root, p)
		// Resolve the parent folders too: /lib may be a link to usr/lib.
		dir, base := path.Split(p)
		if dir != "/" && dir != "" {
			d, err := resolveDir(root, path.Clean(dir))
			if err != nil {
				return "", err
			}
			p = path.Join(d, base)
			host = filepath.Join(root, p)
		}
		fi, err := os.Lstat(host)
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			if !fi.Mode().IsRegular() {
				return "", fmt.Errorf("%s is not a regular file", p)
			}
			return host, nil
		}
		t, err := os.Readlink(host)
		if err != nil {
			return "", err
		}
		if !path.IsAbs(t) {
			t = path.Join(path.Dir(p), t)
		}
		p = path.Clean(t)
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", p)
}

// resolveDir resolves symbolic links among the folders of the image path d.
func resolveDir(root, d string) (string, error) {
	out := "/"
	for _, part := range strings.Split(strings.TrimPrefix(d, "/"), "/") {
		next := path.Join(out, part)
		for i := 0; ; i++ {
			if i == 40 {
				return "", fmt.Errorf("%s: too many levels of symbolic links", d)
			}
			fi, err := os.Lstat(filepath.Join(root, next))
			if err != nil || fi.Mode()&os.ModeSymlink == 0 {
				break // a missing folder is reported by the caller's Lstat
			}
			t, err := os.Readlink(filepath.Join(root, next))
			if err != nil {
				return "", err
			}
			if !path.IsAbs(t) {
				t = path.Join(path.Dir(next), t)
			}
			next = path.Clean(t)
		}
		out = next
	}
	return out, nil
}

// find returns the host file of library name, searched as the loader does.
func find(root, name string) (string, error) {
	for _, d := range searchDirs {
		f, err := resolve(root, path.Join(d, name))
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("library %s is not in %s (searched %v): add its package", name, root, searchDirs)
}

// deps returns the interpreter and DT_NEEDED names of the ELF file f.
func deps(f string) (interp string, needed []string, err error) {
	e, err := elf.Open(f)
	if err != nil {
		return "", nil, err
	}
	defer e.Close()
	for _, p := range e.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return "", nil, err
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	needed, err = e.ImportedLibraries()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return "", nil, err
	}
	return interp, needed, nil
}

func run(root string, programs []string) ([]string, error) {
	adds := map[string]string{} // image path -> host file
	queue := []string{}
	for _, p := range programs {
		f, err := resolve(root, p)
		if err != nil {
			return nil, fmt.Errorf("program %s: %w", p, err)
		}
		queue = append(queue, f)
	}
	seen := map[string]bool{}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		if seen[f] {
			continue
		}
		seen[f] = true
		interp, needed, err := deps(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if interp != "" {
			h, err := resolve(root, interp)
			if err != nil {
				return nil, fmt.Errorf("interpreter of %s: %w", f, err)
			}
			adds[interp] = h
		}
		for _, n := range needed {
			h, err := find(root, n)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			adds[path.Join(libDir, n)] = h
			queue = append(queue, h)
		}
	}
	var out []string
	for k, v := range adds {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}

func main() {
	root := flag.String("root", "", "the unpacked root the programs and libraries come from (required)")
	flag.Parse()
	if *root == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: elfdeps -root ROOT PROGRAM...")
		os.Exit(2)
	}
	lines, err := run(*root, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "elfdeps:", err)
		os.Exit(1)
	}
	fmt.Println(strings.Join(lines, "\n"))
}
