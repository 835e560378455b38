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

// TestDiscoverIDsWinOverMasks: where ids exist the masks are not used,
// even when they disagree.
func TestDiscoverIDsWinOverMasks(t *testing.T) {
	files := twoNodes()
	// The masks say two packages, the ids one.
	for c, mask := range []string{"0-1", "0-1", "2-3", "2-3"} {
		files["devices/system/cpu/cpu"+strconv.Itoa(c)+"/topology/core_siblings_list"] = mask + "\n"
	}
	topo, err := NewFS(writeTree(t, files)).Discover()
	require.NoError(t, err)
	base, err := NewFS(writeTree(t, twoNodes())).Discover()
	require.NoError(t, err)
	assert.Equal(t, base.Sockets, topo.Sockets)
	require.Len(t, topo.Sockets, 1)
	assert.Equal(t, 0, topo.Sockets[0].ID)
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
