package units

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
