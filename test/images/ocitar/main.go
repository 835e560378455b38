// Command ocitar writes a single-layer OCI image-layout archive from a few
// local files, so the e2e can give containerd images without a registry:
//
//	ocitar -o pause.tar -name e2e.local/pause:1 -entrypoint /pause -add /pause=bin/pause
//	ctr -n k8s.io images import pause.tar    # -> image "e2e.local/pause:1"
//
// It is stdlib only and byte-reproducible: the same inputs give the same
// archive, so the images' digests only change when a binary does.
package main

import (
	"archive/tar"
	"bytes"
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
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Media types and annotation keys from the OCI image spec and containerd.
const (
	mediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	mediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	// An uncompressed layer: containerd unpacks it as is, and its digest is
	// also its diff_id, which leaves nothing to get wrong.
	mediaTypeLayer = "application/vnd.oci.image.layer.v1.tar"

	// containerd's import names the image from this annotation when it holds
	// a full reference, with no --base-name or --index-name needed.
	annotationImageName = "io.containerd.image.name"
	// The OCI spec's name for a manifest in an index: the tag only.
	annotationRefName = "org.opencontainers.image.ref.name"
)

// epoch is every tar entry's mtime: a fixed time makes the archive depend on
// the files' contents only.
var epoch = time.Unix(0, 0).UTC()

// File is one regular file of the image's single layer.
type File struct {
	Path string // absolute path in the image, e.g. "/pause"
	Data []byte
}

// Image is what Write turns into an archive.
type Image struct {
	Name       string // full reference with a tag, e.g. "e2e.local/pause:1"
	Arch       string // GOARCH of the binaries, e.g. "amd64"
	Entrypoint []string
	Files      []File
}

// descriptor, manifest, index and config are the few fields of the OCI
// image spec's JSON documents that this image needs.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

type config struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		Entrypoint []string `json:"Entrypoint"`
		Env        []string `json:"Env,omitempty"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// tagRE is the OCI distribution spec's tag grammar.
var tagRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// splitName returns the tag of a full reference "repo:tag". A digest
// reference or a name without a tag is refused: kubelet would look the image
// up as "repo:latest", which is rarely what the caller meant.
func splitName(name string) (tag string, err error) {
	if name == "" {
		return "", errors.New("image name is empty")
	}
	if strings.ContainsAny(name, "@ \t\n") {
		return "", fmt.Errorf("image name %q: want repo:tag, without digest or spaces", name)
	}
	i := strings.LastIndex(name, ":")
	if i <= 0 || i < strings.LastIndex(name, "/") {
		return "", fmt.Errorf("image name %q has no tag (want e.g. e2e.local/pause:1)", name)
	}
	if tag = name[i+1:]; !tagRE.MatchString(tag) {
		return "", fmt.Errorf("image name %q: bad tag %q", name, tag)
	}
	return tag, nil
}

// Write writes img to w as an OCI image-layout tar: oci-layout, index.json
// and blobs/sha256/ holding the layer, the config and the manifest.
func Write(w io.Writer, img Image) error {
	tag, err := splitName(img.Name)
	if err != nil {
		return err
	}
	if len(img.Entrypoint) == 0 || img.Entrypoint[0] == "" {
		return errors.New("entrypoint is empty")
	}
	if img.Arch == "" {
		return errors.New("architecture is empty")
	}
	layer, err := layerTar(img.Files)
	if err != nil {
		return err
	}

	var blobs [][]byte // written in this order; any order imports
	add := func(mediaType string, data []byte) descriptor {
		blobs = append(blobs, data)
		sum := sha256.Sum256(data)
		return descriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(data))}
	}
	layerDesc := add(mediaTypeLayer, layer)

	var cfg config
	cfg.Architecture, cfg.OS = img.Arch, "linux"
	cfg.Config.Entrypoint = img.Entrypoint
	// containerd's CRI sets no PATH of its own; give the usual one.
	cfg.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	cfg.RootFS.Type = "layers"
	cfg.RootFS.DiffIDs = []string{layerDesc.Digest} // uncompressed: diff_id = digest
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	cfgDesc := add(mediaTypeConfig, cfgJSON)

	mfJSON, err := json.Marshal(manifest{SchemaVersion: 2, MediaType: mediaTypeManifest, Config: cfgDesc, Layers: []descriptor{layerDesc}})
	if err != nil {
		return err
	}
	mfDesc := add(mediaTypeManifest, mfJSON)
	mfDesc.Platform = &platform{Architecture: img.Arch, OS: "linux"} // ctr import keeps only its own platform
	mfDesc.Annotations = map[string]string{annotationImageName: img.Name, annotationRefName: tag}

	idxJSON, err := json.Marshal(index{SchemaVersion: 2, MediaType: mediaTypeIndex, Manifests: []descriptor{mfDesc}})
	if err != nil {
		return err
	}

	tw := tar.NewWriter(w)
	entries := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", idxJSON},
		{"blobs/", nil},
		{"blobs/sha256/", nil},
	}
	for _, b := range blobs {
		sum := sha256.Sum256(b)
		entries = append(entries, struct {
			name string
			data []byte
		}{"blobs/sha256/" + hex.EncodeToString(sum[:]), b})
	}
	for _, e := range entries {
		if err := writeEntry(tw, e.name, 0o644, e.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// layerTar returns the layer: files (mode 0755, root-owned) in path order,
// each preceded by the directories above it that are not there yet.
func layerTar(files []File) ([]byte, error) {
	if len(files) == 0 {
		return nil, errors.New("no files to add")
	}
	sorted := append([]File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	seen := map[string]bool{}
	for _, f := range sorted {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/" {
			return nil, fmt.Errorf("image path %q: want a clean absolute file path like /pause", f.Path)
		}
		if seen[f.Path] {
			return nil, fmt.Errorf("image path %q added twice", f.Path)
		}
		rel := f.Path[1:] // layer entries are relative to the root
		var dirs []string
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			dirs = append([]string{d}, dirs...)
		}
		for _, d := range dirs {
			if seen["/"+d] {
				continue
			}
			seen["/"+d] = true
			if err := writeEntry(tw, d+"/", 0o755, nil); err != nil {
				return nil, err
			}
		}
		seen[f.Path] = true
		if err := writeEntry(tw, rel, 0o755, f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeEntry writes a regular file, or a directory when name ends in "/",
// with uid/gid 0, no user names and the fixed mtime.
func writeEntry(tw *tar.Writer, name string, mode int64, data []byte) error {
	hdr := &tar.Header{Name: name, Mode: mode, ModTime: epoch, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(data))}
	if strings.HasSuffix(name, "/") {
		hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeDir, 0o755, 0
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// addFlags collects repeated -add DST=SRC.
type addFlags []string

func (a *addFlags) String() string     { return strings.Join(*a, ",") }
func (a *addFlags) Set(v string) error { *a = append(*a, v); return nil }

// parseAdd splits "-add /pause=bin/pause" into the image path and the local file.
func parseAdd(v string) (dst, src string, err error) {
	dst, src, ok := strings.Cut(v, "=")
	if !ok || dst == "" || src == "" {
		return "", "", fmt.Errorf("-add %q: want IMAGEPATH=LOCALFILE, e.g. /pause=bin/pause", v)
	}
	return dst, src, nil
}

// errUsage is a flag parse error, which the flag package has already printed.
type errUsage struct{ error }

func (e errUsage) Unwrap() error { return e.error }

// run is main without the exit, so that tests can call it.
func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("ocitar", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "archive to write (required)")
	name := fs.String("name", "", "full image reference with tag, e.g. e2e.local/pause:1 (required)")
	entrypoint := fs.String("entrypoint", "", "the image's entrypoint, e.g. /pause (required)")
	arch := fs.String("arch", runtime.GOARCH, "architecture of the files (GOARCH)")
	var adds addFlags
	fs.Var(&adds, "add", "IMAGEPATH=LOCALFILE to put in the layer; repeatable (at least one)")
	if err := fs.Parse(args); err != nil {
		return errUsage{err} // the flag package has printed it, with the usage
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *out == "" {
		return errors.New("-o is required")
	}
	if len(adds) == 0 {
		return errors.New("at least one -add IMAGEPATH=LOCALFILE is required")
	}
	img := Image{Name: *name, Arch: *arch}
	if *entrypoint != "" {
		img.Entrypoint = []string{*entrypoint}
	}
	for _, a := range adds {
		dst, src, err := parseAdd(a)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("-add %s: %w", a, err)
		}
		img.Files = append(img.Files, File{Path: dst, Data: data})
	}
	var buf bytes.Buffer
	if err := Write(&buf, img); err != nil {
		return err
	}
	// Write then rename: a failed run never leaves a half archive behind.
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".ocitar-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), *out)
}

func main() {
	err := run(os.Args[1:], os.Stderr)
	var usage errUsage
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.As(err, &usage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "ocitar:", err)
		os.Exit(1)
	}
}
