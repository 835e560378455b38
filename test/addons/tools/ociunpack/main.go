// Command ociunpack reads an OCI image-layout archive (what ocitar writes
// and `ctr images import` reads) the way containerd does — index.json, the
// manifest for this platform, its config, its layers in order — checks every
// blob's digest, and unpacks the layers into a folder, so that the
// self-test can run the image's programs from their own root (chroot) on a
// host without a container runtime:
//
//	ociunpack -o ROOTFS image.tar
//	name=e2e.local/kube-proxy:v1.37.2 entrypoint=/usr/local/bin/kube-proxy layers=1 files=57
//
// It handles what the add-on images hold (uncompressed or gzip layers,
// regular files, folders, symbolic links); whiteouts are refused.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

type descriptor struct {
	MediaType   string                             `json:"mediaType"`
	Digest      string                             `json:"digest"`
	Size        int64                              `json:"size"`
	Platform    *struct{ Architecture, OS string } `json:"platform"`
	Annotations map[string]string                  `json:"annotations"`
}

func main() {
	out := flag.String("o", "", "folder to unpack the image's layers into (required; created)")
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: ociunpack -o ROOTFS IMAGE.tar")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *out); err != nil {
		fmt.Fprintln(os.Stderr, "ociunpack:", err)
		os.Exit(1)
	}
}

func run(archive, out string) error {
	files := map[string][]byte{}
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			files[path.Clean(h.Name)] = b
		}
	}
	blob := func(d descriptor) ([]byte, error) {
		alg, hexsum, ok := strings.Cut(d.Digest, ":")
		if !ok || alg != "sha256" {
			return nil, fmt.Errorf("digest %q: want sha256:…", d.Digest)
		}
		b, ok := files["blobs/sha256/"+hexsum]
		if !ok {
			return nil, fmt.Errorf("blob %s is not in the archive", d.Digest)
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != hexsum || int64(len(b)) != d.Size {
			return nil, fmt.Errorf("blob %s: content does not match its digest or size", d.Digest)
		}
		return b, nil
	}
	if _, ok := files["oci-layout"]; !ok {
		return errors.New("no oci-layout: not an OCI image layout")
	}
	var idx struct{ Manifests []descriptor }
	if err := json.Unmarshal(files["index.json"], &idx); err != nil {
		return fmt.Errorf("index.json: %w", err)
	}
	var mfd *descriptor
	for i, m := range idx.Manifests {
		if m.Platform == nil || (m.Platform.OS == "linux" && m.Platform.Architecture == runtime.GOARCH) {
			mfd = &idx.Manifests[i]
			break
		}
	}
	if mfd == nil {
		return fmt.Errorf("no manifest for linux/%s in index.json", runtime.GOARCH)
	}
	name := mfd.Annotations["io.containerd.image.name"]
	if name == "" {
		return errors.New("the manifest has no io.containerd.image.name annotation: ctr import would not name it")
	}
	mb, err := blob(*mfd)
	if err != nil {
		return err
	}
	var mf struct {
		Config descriptor
		Layers []descriptor
	}
	if err := json.Unmarshal(mb, &mf); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	cb, err := blob(mf.Config)
	if err != nil {
		return err
	}
	var cfg struct {
		Config struct {
			Entrypoint []string
			Cmd        []string
		} `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(cb, &cfg); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if len(cfg.RootFS.DiffIDs) != len(mf.Layers) {
		return fmt.Errorf("config has %d diff_ids for %d layers", len(cfg.RootFS.DiffIDs), len(mf.Layers))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	n := 0
	for i, l := range mf.Layers {
		lb, err := blob(l)
		if err != nil {
			return err
		}
		var r io.Reader = bytes.NewReader(lb)
		if strings.HasSuffix(l.MediaType, "+gzip") {
			if r, err = gzip.NewReader(r); err != nil {
				return err
			}
		}
		h := sha256.New()
		c, err := untar(io.TeeReader(r, h), out)
		if err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
		if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != cfg.RootFS.DiffIDs[i] {
			return fmt.Errorf("layer %d: diff_id %s, config says %s", i, got, cfg.RootFS.DiffIDs[i])
		}
		n += c
	}
	fmt.Printf("name=%s entrypoint=%s layers=%d files=%d\n", name, strings.Join(cfg.Config.Entrypoint, " "), len(mf.Layers), n)
	return nil
}

func untar(r io.Reader, out string) (int, error) {
	tr := tar.NewReader(r)
	n := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			// Drain: the diff_id covers the tar's padding too.
			_, err = io.Copy(io.Discard, r)
			return n, err
		}
		if err != nil {
			return n, err
		}
		name := path.Clean("/" + h.Name)
		if strings.HasPrefix(path.Base(name), ".wh.") {
			return n, fmt.Errorf("%s: whiteouts are not handled", name)
		}
		dst := filepath.Join(out, name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(dst, os.FileMode(h.Mode)&os.ModePerm)
		case tar.TypeReg:
			var w *os.File
			if w, err = os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, os.FileMode(h.Mode)&os.ModePerm); err == nil {
				_, err = io.Copy(w, tr)
				if cerr := w.Close(); err == nil {
					err = cerr
				}
			}
			n++
		case tar.TypeSymlink:
			os.Remove(dst)
			err = os.Symlink(h.Linkname, dst)
			n++
		default:
			err = fmt.Errorf("%s: tar entry type %q not handled", name, h.Typeflag)
		}
		if err != nil {
			return n, err
		}
	}
}
