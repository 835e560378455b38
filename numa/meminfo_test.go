package numa

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseNodeMeminfo(t *testing.T) {
	good := []struct {
		name, in string
		want     NodeMeminfo
	}{
		{"current kernel", "Node 0 MemTotal:       131732940 kB\nNode 0 MemFree:        130167340 kB\nNode 0 HugePages_Total:     0\n",
			NodeMeminfo{"MemTotal": 131732940 * 1024, "MemFree": 130167340 * 1024, "HugePages_Total": 0}},
		{"old kernel leading blank line", "\nNode 3 MemTotal: 8 kB\nNode 3 MemFree: 4 kB\n",
			NodeMeminfo{"MemTotal": 8192, "MemFree": 4096}},
		{"trailing NUL", "Node 0 MemTotal: 1 kB\nNode 0 MemFree: 0 kB\n\x00", NodeMeminfo{"MemTotal": 1024, "MemFree": 0}},
		{"parenthesised key", "Node 0 MemTotal: 1 kB\nNode 0 MemFree: 1 kB\nNode 0 Active(anon): 2 kB\n",
			NodeMeminfo{"MemTotal": 1024, "MemFree": 1024, "Active(anon)": 2048}},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			id := 0
			if strings.Contains(tc.in, "Node 3") {
				id = 3
			}
			got, err := ParseNodeMeminfo(id, tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}

	bad := []struct{ in, reason string }{
		{"", "empty"},
		{"\x00\n", "empty"},
		{"Node 0 MemTotal: 1 kB\n", "no MemFree line"},
		{"Node 0 MemFree: 1 kB\n", "no MemTotal line"},
		{"Node 1 MemTotal: 1 kB\nNode 1 MemFree: 1 kB\n", `start with "Node 0"`},
		{"MemTotal: 1 kB\nMemFree: 1 kB\n", "want \"Node 0"},
		{"Node 0 MemTotal: 1 kB\n\nNode 0 MemFree: 1 kB\n", "line 2"},
		{"Node 0 MemTotal: 1 kB\nNode 0 MemTotal: 2 kB\nNode 0 MemFree: 1 kB\n", "appears twice"},
		{"Node 0 MemTotal 1 kB\nNode 0 MemFree: 1 kB\n", "followed by a colon"},
		{"Node 0 MemTotal: -1 kB\nNode 0 MemFree: 1 kB\n", "not a number of kB"},
		{"Node 0 MemTotal: 1 MB\nNode 0 MemFree: 1 kB\n", "only kB"},
		{"Node 0 MemTotal: 1 kB\nNode 0 MemFree: x\n", "not a non-negative decimal"},
		{"Node 0 MemTotal: 1 kB\nNode 0 MemFree: +1\n", "not a non-negative decimal"},
		{"Node 0 MemTotal: 99999999999999999999 kB\nNode 0 MemFree: 1 kB\n", "not a number of kB"},
		{"Node 0 MemTotal: 18014398509481984 kB\nNode 0 MemFree: 1 kB\n", "too large"},
		{"Node 0 MemTotal: 1 kB extra\nNode 0 MemFree: 1 kB\n", "want \"Node 0 <Key>"},
		{"Node 0 : 1 kB\nNode 0 MemFree: 1 kB\nNode 0 MemTotal: 1 kB\n", "followed by a colon"},
	}
	for i, tc := range bad {
		t.Run("bad"+strconv.Itoa(i), func(t *testing.T) {
			_, err := ParseNodeMeminfo(0, tc.in)
			require.Error(t, err, "%q", tc.in)
			assert.Contains(t, err.Error(), tc.reason, "%q", tc.in)
		})
	}
}

// FuzzNodeMeminfo: no input panics, and an accepted input has MemTotal and
// MemFree and parses the same way again when printed back.
func FuzzNodeMeminfo(f *testing.F) {
	f.Add(0, "Node 0 MemTotal:       131732940 kB\nNode 0 MemFree:        130167340 kB\nNode 0 HugePages_Total:     0\n")
	f.Add(3, "\nNode 3 MemTotal: 8 kB\nNode 3 MemFree: 4 kB\n\x00")
	f.Add(1, "Node 1 MemTotal: 1 kB\nNode 1 MemTotal: 1 kB\n")
	f.Fuzz(func(t *testing.T, id int, in string) {
		got, err := ParseNodeMeminfo(id, in)
		if err != nil {
			return
		}
		_, hasTotal := got["MemTotal"]
		_, hasFree := got["MemFree"]
		if !hasTotal || !hasFree {
			t.Fatalf("accepted %q without MemTotal/MemFree", in)
		}
		var b strings.Builder
		for k, v := range got {
			b.WriteString("Node " + strconv.Itoa(id) + " " + k + ": " + strconv.FormatUint(v, 10) + "\n")
		}
		again, err := ParseNodeMeminfo(id, b.String())
		if err != nil {
			t.Fatalf("printed form %q of accepted %q fails: %v", b.String(), in, err)
		}
		assert.Equal(t, got, again)
	})
}
