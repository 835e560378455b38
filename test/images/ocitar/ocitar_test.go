package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// entry is one file of a tar, as read back.
type entry struct {
	hdr  *tar.Header
	data []byte
}

// readTar returns a tar's entries by name, and the names in order.
func readTar(t *testing.T, data []byte) (map[string]entry, []string) {
	t.Helper()
	entries := map[string]entry{}
	var names []string
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		body, err := io.ReadAll(tr)
		require.NoError(t, err)
		require.NotContains(t, entries, hdr.Name, "duplicate entry")
		entries[hdr.Name] = entry{hdr, body}
		names = append(names, hdr.Name)
	}
	return entries, names
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// blob returns the blob a descriptor points to, after checking that it is
// there and that its digest and size are the descriptor's.
func blob(t *testing.T, entries map[string]entry, d descriptor) []byte {
	t.Helper()
	hexDigest, ok := strings.CutPrefix(d.Digest, "sha256:")
	require.True(t, ok, "digest %q is not sha256", d.Digest)
	e, ok := entries["blobs/sha256/"+hexDigest]
	require.True(t, ok, "no blob for %s (%s)", d.Digest, d.MediaType)
	assert.Equal(t, d.Digest, sha(e.data), "blob content does not match its digest")
	assert.Equal(t, d.Size, int64(len(e.data)), "descriptor size of %s", d.MediaType)
	assert.Equal(t, d.Size, e.hdr.Size, "tar header size of %s", d.MediaType)
	return e.data
}

// writeTiny runs the command line on a tiny file and returns the archive.
func writeTiny(t *testing.T, dir string) []byte {
	t.Helper()
	src := filepath.Join(dir, "tiny")
	require.NoError(t, os.WriteFile(src, []byte("#!/bin/true\n"), 0o600)) // mode must not leak into the layer
	out := filepath.Join(dir, "out.tar")
	var stderr bytes.Buffer
	require.NoError(t, run([]string{"-o", out, "-name", "e2e.local/tiny:1", "-arch", "arm64",
		"-entrypoint", "/bin/tiny", "-add", "/bin/tiny=" + src, "-add", "/etc/x=" + src}, &stderr))
	assert.Empty(t, stderr.String())
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	return data
}

func TestArchive(t *testing.T) {
	entries, names := readTar(t, writeTiny(t, t.TempDir()))

	assert.JSONEq(t, `{"imageLayoutVersion":"1.0.0"}`, string(entries["oci-layout"].data))
	for _, n := range names {
		h := entries[n].hdr
		assert.Zero(t, h.Uid, n)
		assert.Zero(t, h.Gid, n)
		assert.Equal(t, epoch, h.ModTime.UTC(), n)
	}

	var idx index
	require.NoError(t, json.Unmarshal(entries["index.json"].data, &idx))
	assert.Equal(t, 2, idx.SchemaVersion)
	assert.Equal(t, mediaTypeIndex, idx.MediaType)
	require.Len(t, idx.Manifests, 1)
	mfDesc := idx.Manifests[0]
	assert.Equal(t, mediaTypeManifest, mfDesc.MediaType)
	assert.Equal(t, map[string]string{
		"io.containerd.image.name":          "e2e.local/tiny:1",
		"org.opencontainers.image.ref.name": "1",
	}, mfDesc.Annotations)
	assert.Equal(t, &platform{Architecture: "arm64", OS: "linux"}, mfDesc.Platform)

	var mf manifest
	require.NoError(t, json.Unmarshal(blob(t, entries, mfDesc), &mf))
	assert.Equal(t, 2, mf.SchemaVersion)
	assert.Equal(t, mediaTypeManifest, mf.MediaType)
	assert.Equal(t, mediaTypeConfig, mf.Config.MediaType)
	require.Len(t, mf.Layers, 1)
	assert.Equal(t, mediaTypeLayer, mf.Layers[0].MediaType)

	var cfg config
	require.NoError(t, json.Unmarshal(blob(t, entries, mf.Config), &cfg))
	assert.Equal(t, "arm64", cfg.Architecture)
	assert.Equal(t, "linux", cfg.OS)
	assert.Equal(t, []string{"/bin/tiny"}, cfg.Config.Entrypoint)
	assert.Equal(t, "layers", cfg.RootFS.Type)

	layer := blob(t, entries, mf.Layers[0])
	// The layer is uncompressed, so its diff_id is the digest of its bytes.
	assert.Equal(t, []string{sha(layer)}, cfg.RootFS.DiffIDs)

	// Exactly the three referenced blobs, nothing else.
	var blobNames []string
	for _, n := range names {
		if strings.HasPrefix(n, "blobs/sha256/") && n != "blobs/sha256/" {
			blobNames = append(blobNames, n)
		}
	}
	assert.ElementsMatch(t, []string{
		"blobs/sha256/" + strings.TrimPrefix(mfDesc.Digest, "sha256:"),
		"blobs/sha256/" + strings.TrimPrefix(mf.Config.Digest, "sha256:"),
		"blobs/sha256/" + strings.TrimPrefix(mf.Layers[0].Digest, "sha256:"),
	}, blobNames)

	// The layer: parent directories first, relative names, 0755, root-owned.
	files, order := readTar(t, layer)
	assert.Equal(t, []string{"bin/", "bin/tiny", "etc/", "etc/x"}, order)
	for _, n := range order {
		h := files[n].hdr
		assert.Equal(t, int64(0o755), h.Mode, n)
		assert.Zero(t, h.Uid, n)
		assert.Zero(t, h.Gid, n)
		assert.Empty(t, h.Uname, n)
		assert.Equal(t, epoch, h.ModTime.UTC(), n)
	}
	assert.Equal(t, byte(tar.TypeDir), files["bin/"].hdr.Typeflag)
	assert.Equal(t, byte(tar.TypeReg), files["bin/tiny"].hdr.Typeflag)
	assert.Equal(t, "#!/bin/true\n", string(files["bin/tiny"].data))
}

func TestReproducible(t *testing.T) {
	a := writeTiny(t, t.TempDir())
	b := writeTiny(t, t.TempDir()) // other paths, other file mtimes
	assert.True(t, bytes.Equal(a, b), "two runs gave different archives")

	// ...and the content does matter.
	var c bytes.Buffer
	require.NoError(t, Write(&c, Image{Name: "e2e.local/tiny:1", Arch: "arm64", Entrypoint: []string{"/bin/tiny"},
		Files: []File{{Path: "/bin/tiny", Data: []byte("other")}}}))
	assert.False(t, bytes.Equal(a, c.Bytes()))
}

func TestDefaultArchIsBuildArch(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(src, []byte("x"), 0o644))
	out := filepath.Join(dir, "o.tar")
	require.NoError(t, run([]string{"-o", out, "-name", "a.b/c:d", "-entrypoint", "/f", "-add", "/f=" + src}, io.Discard))
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	entries, _ := readTar(t, data)
	var idx index
	require.NoError(t, json.Unmarshal(entries["index.json"].data, &idx))
	require.Len(t, idx.Manifests, 1)
	assert.Equal(t, runtime.GOARCH, idx.Manifests[0].Platform.Architecture)
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(src, []byte("x"), 0o644))
	out := filepath.Join(dir, "out.tar")
	ok := []string{"-o", out, "-name", "e2e.local/pause:1", "-entrypoint", "/pause"}
	args := func(extra ...string) []string { return append(append([]string(nil), ok...), extra...) }

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing file", args("-add", "/pause="+filepath.Join(dir, "nope")), "no such file or directory"},
		{"add without =", args("-add", "/pause"), `-add "/pause": want IMAGEPATH=LOCALFILE`},
		{"add without source", args("-add", "/pause="), `-add "/pause=": want IMAGEPATH=LOCALFILE`},
		{"add without path", args("-add", "="+src), "want IMAGEPATH=LOCALFILE"},
		{"relative image path", args("-add", "pause="+src), `image path "pause": want a clean absolute file path`},
		{"unclean image path", args("-add", "/a/../pause="+src), "want a clean absolute file path"},
		{"same path twice", args("-add", "/pause="+src, "-add", "/pause="+src), `image path "/pause" added twice`},
		{"no -add", args(), "at least one -add"},
		{"empty name", []string{"-o", out, "-name", "", "-entrypoint", "/pause", "-add", "/pause=" + src}, "image name is empty"},
		{"no name", []string{"-o", out, "-entrypoint", "/pause", "-add", "/pause=" + src}, "image name is empty"},
		{"name without tag", []string{"-o", out, "-name", "e2e.local:5000/pause", "-entrypoint", "/pause", "-add", "/pause=" + src}, "has no tag"},
		{"digest name", []string{"-o", out, "-name", "e2e.local/pause@sha256:00", "-entrypoint", "/pause", "-add", "/pause=" + src}, "without digest"},
		{"bad tag", []string{"-o", out, "-name", "e2e.local/pause:-x", "-entrypoint", "/pause", "-add", "/pause=" + src}, `bad tag "-x"`},
		{"no entrypoint", []string{"-o", out, "-name", "e2e.local/pause:1", "-add", "/pause=" + src}, "entrypoint is empty"},
		{"no -o", []string{"-name", "e2e.local/pause:1", "-entrypoint", "/pause", "-add", "/pause=" + src}, "-o is required"},
		{"stray argument", args("-add", "/pause="+src, "extra"), "unexpected arguments"},
		{"unknown flag", args("-bogus"), "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.args, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NoFileExists(t, out, "a failed run must not leave an archive")
			left, _ := filepath.Glob(filepath.Join(dir, ".ocitar-*"))
			assert.Empty(t, left, "temporary file left behind")
		})
	}
	// The same flags with a good -add do work: the cases above fail for
	// their own reason.
	require.NoError(t, run(args("-add", "/pause="+src), io.Discard))
	assert.FileExists(t, out)
}

func TestSplitName(t *testing.T) {
	for name, tag := range map[string]string{
		"e2e.local/pause:1":            "1",
		"e2e.local:5000/a/workload:v2": "v2",
		"busybox:latest":               "latest",
	} {
		got, err := splitName(name)
		require.NoError(t, err, name)
		assert.Equal(t, tag, got, name)
	}
}
