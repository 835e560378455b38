package numa

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// warned reports whether some warning contains want.
func warned(topo *Topology, want string) bool {
	for _, w := range topo.Warnings {
		if strings.Contains(w, want) {
			return true
		}
	}
	return false
}

// TestDiscoverPresentBoundsCPUs: cpuN directories beyond cpu/present
// (SPARC, ppc64) are not CPUs, and are named in a warning.
func TestDiscoverPresentBoundsCPUs(t *testing.T) {
	topo := discoverFixture(t, "synthetic-sparc-dirs-beyond-present")
	assert.Equal(t, "0-3", topo.Present.String())
	require.Len(t, topo.CPUs, 4)
	assert.Equal(t, 3, topo.CPUs[3].ID)
	assert.True(t, warned(topo, "directories for CPUs 4-7 beyond devices/system/cpu/present (0-3): they are not CPUs"), "%q", topo.Warnings)
}

// TestDiscoverIDsWinOverMasks: where every CPU has a package id the ids
// make the sockets, even when the masks disagree, and a warning says so
// (lscpu would count the masks).
func TestDiscoverIDsWinOverMasks(t *testing.T) {
	files := twoNodes()
	packageMasks(files, "0-1", "0-1", "2-3", "2-3") // two packages; the ids say one
	topo, err := NewFS(writeTree(t, files)).Discover()
	require.NoError(t, err)
	base, err := NewFS(writeTree(t, twoNodes())).Discover()
	require.NoError(t, err)
	assert.Equal(t, base.Sockets, topo.Sockets)
	require.Len(t, topo.Sockets, 1)
	assert.Equal(t, 0, topo.Sockets[0].ID)
	assert.True(t, warned(topo, "sockets by physical_package_id: 1; by distinct core_siblings masks, which lscpu counts as Socket(s): 2; using physical_package_id"), "%q", topo.Warnings)

	packageMasks(files, "0-3", "0-3", "0-3", "0-3") // agreeing masks: silent
	topo, err = NewFS(writeTree(t, files)).Discover()
	require.NoError(t, err)
	assert.Equal(t, base.Warnings, topo.Warnings)
}

// TestDiscoverMasksMalformed: a malformed core_siblings is an error naming
// the file, when the masks are used.
func TestDiscoverMasksMalformed(t *testing.T) {
	files := map[string]string{
		"devices/system/cpu/present":                          "0\n",
		"devices/system/cpu/online":                           "0\n",
		"devices/system/cpu/cpu0/topology/thread_siblings":    "1\n",
		"devices/system/cpu/cpu0/topology/core_siblings_list": "0-x\n",
	}
	_, err := NewFS(writeTree(t, files)).Discover()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cpu0/topology/core_siblings_list")
	assert.Contains(t, err.Error(), "0-x")

	files["devices/system/cpu/cpu0/topology/core_siblings_list"] = "1\n"
	_, err = NewFS(writeTree(t, files)).Discover()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "do not include cpu0")
}

// TestDiscoverPackageMinus1: physical_package_id -1 (PowerVM) gives lscpu's
// sockets, the distinct core_siblings masks numbered 0..N-1, and keeps
// the kernel's core_id.
func TestDiscoverPackageMinus1(t *testing.T) {
	topo := discoverFixture(t, "synthetic-powervm-lpar-pkgid-minus1")
	require.Len(t, topo.Sockets, 4)
	for i, s := range topo.Sockets {
		assert.Equal(t, i, s.ID)
		require.Len(t, s.Cores, 1)
		assert.Equal(t, 4*i, s.Cores[0].CoreID, "core_id is kept")
		assert.Equal(t, i, s.Cores[0].Socket)
	}
	assert.Equal(t, "4-7", topo.Sockets[1].CPUs.String())
	assert.Equal(t, "1", topo.Sockets[2].Nodes.String())
	assert.True(t, warned(topo, "physical_package_id is -1 (unknown, as on PowerVM, s390, SPARC) for CPUs 0-15: sockets are the distinct core_siblings masks, numbered 0..3"), "%q", topo.Warnings)
	assert.False(t, warned(topo, "socket -1"), "%q", topo.Warnings)
}

// packageMasks sets core_siblings_list of twoNodes' CPUs 0-3.
func packageMasks(files map[string]string, masks ...string) {
	for c, mask := range masks {
		files["devices/system/cpu/cpu"+strconv.Itoa(c)+"/topology/core_siblings_list"] = mask + "\n"
	}
}

// TestDiscoverPackageMinus1Mixed: when some CPUs have a package id and
// others -1, every socket is lscpu's logical one, so that the numbers do
// not collide; without masks on every CPU the ids stay and -1 is a socket.
func TestDiscoverPackageMinus1Mixed(t *testing.T) {
	files := twoNodes()
	files["devices/system/cpu/cpu0/topology/physical_package_id"] = "-1\n"
	files["devices/system/cpu/cpu2/topology/physical_package_id"] = "-1\n"
	for _, c := range []string{"1", "3"} {
		files["devices/system/cpu/cpu"+c+"/topology/physical_package_id"] = "7\n"
	}
	packageMasks(files, "0,2", "1,3", "0,2", "1,3")
	topo, err := NewFS(writeTree(t, files)).Discover()
	require.NoError(t, err)
	require.Len(t, topo.Sockets, 2)
	assert.Equal(t, 0, topo.Sockets[0].ID)
	assert.Equal(t, "0,2", topo.Sockets[0].CPUs.String())
	assert.Equal(t, 1, topo.Sockets[1].ID, "package 7 renumbered")
	assert.Equal(t, "1,3", topo.Sockets[1].CPUs.String())
	assert.Equal(t, 1, topo.CPUs[3].Core, "core_id kept")
	assert.True(t, warned(topo, "CPUs 1,3 have a physical_package_id but other CPUs do not"), "%q", topo.Warnings)

	delete(files, "devices/system/cpu/cpu3/topology/core_siblings_list")
	topo, err = NewFS(writeTree(t, files)).Discover()
	require.NoError(t, err)
	require.Len(t, topo.Sockets, 2)
	assert.Equal(t, -1, topo.Sockets[0].ID)
	assert.Equal(t, 7, topo.Sockets[1].ID)
	assert.True(t, warned(topo, "for CPUs 0,2 and not every CPU has core_siblings"), "%q", topo.Warnings)
}

// TestDiscoverOfflineStaleMasks: an offline CPU that kept its topology
// files may have masks without itself (the kernel cleared it); that is no
// error, unlike on an online CPU.
func TestDiscoverOfflineStaleMasks(t *testing.T) {
	files := with(twoNodes(), map[string]string{
		"devices/system/cpu/online": "0-2\n", "devices/system/cpu/offline": "3\n",
	})
	packageMasks(files, "0-2", "0-2", "0-2", "0-2")
	files["devices/system/cpu/cpu3/topology/thread_siblings_list"] = "1\n"
	topo, err := NewFS(writeTree(t, files)).Discover()
	require.NoError(t, err)
	assert.Equal(t, "0-2", topo.Sockets[0].CPUs.String())
	assert.False(t, warned(topo, "siblings"), "%q", topo.Warnings)

	files["devices/system/cpu/online"], files["devices/system/cpu/offline"] = "0-3\n", "\n"
	_, err = NewFS(writeTree(t, files)).Discover()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cpu3/topology/thread_siblings_list")
}
