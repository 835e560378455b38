package hugepool

import (
	"testing"
)

const (
	mi = uint64(1) << 20
	gi = uint64(1) << 30
)

func TestPoolRoundTrip(t *testing.T) {
	for _, p := range []Pool{{0, 2 * mi, 512}, {7, gi, 4}, {250, 64 << 10, 0}, {1, 16 * gi, 1}} {
		back, err := ParsePool(p.String())
		if err != nil || back != p {
			t.Errorf("%v → %q → %v, %v", p, p.String(), back, err)
		}
	}
	for _, bad := range []string{"0:2Mi", "x:2Mi=1", "-1:2Mi=1", "0:3Mi=1", "0:2Mi=-1", "0:2Mi=+1", "+0:2Mi=1"} {
		if _, err := ParsePool(bad); err == nil {
			t.Errorf("ParsePool(%q): want an error", bad)
		}
	}
}

func TestSortForAllocation(t *testing.T) {
	pools := []Pool{{1, 2 * mi, 1}, {0, gi, 1}, {0, 2 * mi, 1}, {1, gi, 1}}
	SortForAllocation(pools)
	want := []Pool{{0, gi, 1}, {1, gi, 1}, {0, 2 * mi, 1}, {1, 2 * mi, 1}}
	for i := range want {
		if pools[i] != want[i] {
			t.Fatalf("got %v, want %v (largest pages first, then by node)", pools, want)
		}
	}
}

func FuzzPool(f *testing.F) {
	for _, s := range []string{"0:2Mi=512", "1:1Gi=4", "250:64Ki=0", "0:2Mi", "x:1=1", "1:1G=1", "0:2Mi=18446744073709551615", "1024:2Mi=1", "0:2Ki=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePool(s)
		if err != nil {
			return
		}
		back, err := ParsePool(p.String())
		if err != nil || back != p {
			t.Fatalf("%q → %v → %q → %v, %v", s, p, p.String(), back, err)
		}
	})
}
