package hostfacts

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The running host's interfaces: lo is among them, in the host's
// namespace, with its address; a missing namespace directory is none.
func TestInterfacesOfThisHost(t *testing.T) {
	ifaces, err := Host{Proc: "/proc", NetnsDir: t.TempDir() + "/none"}.Interfaces()
	require.NoError(t, err)
	found := false
	for _, i := range ifaces {
		if i.Name == "lo" {
			found = true
			assert.Empty(t, i.Namespace)
			assert.Empty(t, i.PCI)
			assert.Equal(t, "127.0.0.1/8", i.Addresses[0].String())
		}
	}
	assert.True(t, found, "lo in %v", ifaces)
}
