package planner

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/numa-partition/numa-partition/partition/planner/validation"
)

// Issue 27 (found by FuzzPlanThenRender): a partition may be named with
// up to 32 characters, and its namespace "np-" + name was checked by
// render as an interface name (IFNAMSIZ, 15 bytes), so a name of 13 or
// more planned and did not render. A namespace is a file in /run/netns;
// only the host link, an interface, needs HostLinkOf's digest.
func TestNamespaceNamesAreFileNames_Issue27(t *testing.T) {
	long := strings.Repeat("a", 32)
	assert.Empty(t, validation.NameProblem(long))
	assert.Empty(t, validation.NamespaceNameProblem(NamespaceOf(long)))
	assert.NotEmpty(t, validation.InterfaceNameProblem(NamespaceOf(long)), "too long for an interface")
	assert.Empty(t, validation.InterfaceNameProblem(HostLinkOf(long)))
	for _, n := range []string{"", ".", "..", "a/b", "a:b", "a b", "a\nb", "a%ib", strings.Repeat("a", 256)} {
		assert.NotEmpty(t, validation.NamespaceNameProblem(n), "%q", n)
	}
	assert.Empty(t, validation.NamespaceNameProblem(strings.Repeat("a", 255)))
}
