package units

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParseBytes(t *testing.T) {
	ok := map[string]uint64{"1Gi": 1 << 30, "512Mi": 512 << 20, "1G": 1e9, "4096": 4096, "0": 0, "1100Mi": 1100 << 20, "1k": 1000}
	for in, want := range ok {
		got, err := ParseBytes(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for in, msg := range map[string]string{"-1Gi": "negative", "1.5": "whole number", "100m": "whole number", "banana": "not a quantity", "": "not a quantity", "1GB": "not a quantity"} {
		_, err := ParseBytes(in)
		assert.ErrorContains(t, err, msg, in)
	}
}

func TestFormatBytes(t *testing.T) {
	for b, want := range map[uint64]string{0: "0", 1 << 30: "1Gi", 1536 << 20: "1536Mi", 2048 << 10: "2Mi", 1000: "1000", 64 << 10: "64Ki", 16 << 30: "16Gi"} {
		assert.Equal(t, want, FormatBytes(b))
		back, err := ParseBytes(FormatBytes(b))
		require.NoError(t, err)
		assert.Equal(t, b, back)
	}
	assert.Equal(t, "hugepages-2Mi", HugepageResource(2<<20))
	assert.Equal(t, "hugepages-1Gi", HugepageResource(1<<30))
}

func TestParseKernelKB(t *testing.T) {
	for in, want := range map[string]uint64{"2048kB": 2 << 20, "1030484 kB": 1030484 * 1024, "0 kB": 0} {
		got, err := ParseKernelKB(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got)
	}
	for _, in := range []string{"2048", "kB", "x kB", "-1kB", "+1kB", "99999999999999999999kB"} {
		_, err := ParseKernelKB(in)
		assert.Error(t, err, in)
	}
}

// Issue 24 item 16: "1Ei" was "not a whole number of bytes" (the int64
// and milli-value shortcuts of resource.Quantity fail for it), and a
// negative request was "size "memory" is negative", naming the resource
// instead of the value.
func TestSizesAreJudgedOnTheirValue_Issue24Item16(t *testing.T) {
	for in, want := range map[string]uint64{"1Ei": 1 << 60, "7Ei": 7 << 60, "1E": 1e18, "9223372036854775807": 1<<63 - 1, "1.5Ki": 1536} {
		got, err := ParseBytes(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for in, msg := range map[string]string{
		"9223372036854775808": `size "9223372036854775808" is too large (at most 9223372036854775807 bytes)`,
		"1e30":                `size "1e30" is too large`,
		"0.3Ki":               `size "0.3Ki" is not a whole number of bytes`,
		"1n":                  `size "1n" is not a whole number of bytes`,
	} {
		_, err := ParseBytes(in)
		require.Error(t, err, in)
		assert.True(t, strings.HasPrefix(err.Error(), msg), "%s: %v", in, err)
	}
	_, err := QuantityBytes(resource.MustParse("-100Gi"))
	assert.EqualError(t, err, `size "-100Gi" is negative`)
}
