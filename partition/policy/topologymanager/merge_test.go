package topologymanager

import (
	"math/rand/v2"
	"testing"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

func h(pref bool, ids ...int) Hint { return NewHint(pref, ids...) }

func empty(pref bool) Hint { s := bitmask.NodeSet{}; return Hint{Affinity: &s, Preferred: pref} }

func nodes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// dist4 makes {0,2} and {1,3} the close pairs.
var dist4 = map[int]map[int]int{
	0: {0: 10, 1: 30, 2: 12, 3: 30},
	1: {0: 30, 1: 10, 2: 30, 3: 12},
	2: {0: 12, 1: 30, 2: 10, 3: 30},
	3: {0: 30, 1: 12, 2: 30, 3: 10},
}

// TestMergeSemantics covers 5.1.1-5.1.9 point by point.
func TestMergeSemantics(t *testing.T) {
	type tc struct {
		id        string
		policy    string
		n         int
		closest   bool
		providers []ProviderHints
		want      Hint
		admit     bool
	}
	cases := []tc{
		{"S1a nil provider map", PolicyBestEffort, 2, false, []ProviderHints{nil}, h(true, 0, 1), true},
		{"S1b empty provider map", PolicyRestricted, 2, false, []ProviderHints{{}}, h(true, 0, 1), true},
		{"S1c nil resource list", PolicyRestricted, 2, false, []ProviderHints{{"memory": nil}}, h(true, 0, 1), true},
		{"S1d empty list is no-affinity: best non-preferred of the rest", PolicyBestEffort, 2, false,
			[]ProviderHints{{"memory": {}}, {"cpu": {h(true, 0), h(true, 0, 1)}}}, h(false, 0), true},
		{"S1e empty list rejects under restricted", PolicyRestricted, 2, false,
			[]ProviderHints{{"memory": {}}, {"cpu": {h(true, 1)}}}, h(false, 1), false},
		{"S1f empty list alone", PolicyBestEffort, 2, false, []ProviderHints{{"memory": {}}}, h(false, 0, 1), true},
		{"S1g nil affinity is don't care in a permutation", PolicyRestricted, 2, false,
			[]ProviderHints{{"memory": {DontCare(true)}}, {"cpu": {h(true, 1)}}}, h(true, 1), true},
		{"S1h empty mask ANDs to zero and is dropped", PolicyBestEffort, 2, false,
			[]ProviderHints{{"memory": {empty(true)}}}, h(false, 0, 1), true},
		{"S1i single-numa-node all don't care", PolicySingleNUMANode, 2, false, []ProviderHints{nil, {}}, DontCare(true), true},
		{"S2 raw masks must be identical to be preferred", PolicyRestricted, 2, false,
			[]ProviderHints{{"a": {h(true, 0, 1)}}, {"b": {h(true, 0)}}}, h(false, 0), false},
		{"S3a single-numa-node filters a list empty", PolicySingleNUMANode, 2, false,
			[]ProviderHints{{"memory": {h(true, 0, 1)}}}, DontCare(false), false},
		{"S3b single node machine gives nil", PolicySingleNUMANode, 1, false,
			[]ProviderHints{{"memory": {h(true, 0)}}}, DontCare(true), true},
		{"S3c single-numa-node keeps preferred single", PolicySingleNUMANode, 4, false,
			[]ProviderHints{{"memory": {h(false, 0), h(true, 2), h(true, 1, 2)}}}, h(true, 2), true},
		{"S4a numeric order: {1,2} beats {0,3}", PolicyBestEffort, 4, false,
			[]ProviderHints{{"memory": {h(true, 0, 3), h(true, 1, 2)}}}, h(true, 1, 2), true},
		{"S5a prefer-closest breaks equal-size ties", PolicyBestEffort, 4, true,
			[]ProviderHints{{"memory": {h(true, 0, 1), h(true, 0, 2)}}}, h(true, 0, 2), true},
		{"S5a' without the option numeric order", PolicyBestEffort, 4, false,
			[]ProviderHints{{"memory": {h(true, 0, 1), h(true, 0, 2)}}}, h(true, 0, 1), true},
		{"S5b fewer bits beats distance", PolicyBestEffort, 4, true,
			[]ProviderHints{{"memory": {h(true, 0, 2), h(true, 1, 2, 3), h(true, 3)}}}, h(true, 3), true},
		{"S5c numeric order {1,2} over {0,3} non-preferred too", PolicyBestEffort, 4, false,
			[]ProviderHints{{"memory": {h(false, 0, 3), h(false, 1, 2)}}}, h(false, 1, 2), true},
		{"S5e preferred beats narrower non-preferred", PolicyBestEffort, 2, false,
			[]ProviderHints{{"memory": {h(false, 0), h(true, 0, 1)}}}, h(true, 0, 1), true},
		{"S6 non-preferred: exactly B bits wins over narrower", PolicyBestEffort, 4, false,
			[]ProviderHints{{"a": {h(true, 0, 1, 2)}}, {"b": {h(true, 0, 1, 2, 3), h(false, 0)}}}, h(false, 0, 1, 2), true},
		{"S6' below B: the widest below B", PolicyBestEffort, 4, false,
			[]ProviderHints{{"a": {h(false, 0, 1, 2)}}, {"b": {h(false, 0, 1, 3), h(false, 1, 2, 3)}}}, h(false, 0, 1), true},
		{"S7a no affinity anywhere best-effort", PolicyBestEffort, 2, false, []ProviderHints{nil, {"m": nil}}, h(true, 0, 1), true},
		{"S7b none policy", PolicyNone, 2, false, []ProviderHints{{"m": {h(true, 0)}}}, DontCare(false), true},
		{"S8 bits outside the machine break preference", PolicyRestricted, 2, false,
			[]ProviderHints{{"a": {h(true, 0, 5)}}, {"b": {h(true, 0)}}}, h(false, 0), false},
		{"S9 no candidate: machine, non-preferred", PolicyBestEffort, 2, false,
			[]ProviderHints{{"a": {h(true, 0)}}, {"b": {h(true, 1)}}}, h(false, 0, 1), true},
		{"S9' restricted rejects", PolicyRestricted, 2, false,
			[]ProviderHints{{"a": {h(true, 0)}}, {"b": {h(true, 1)}}}, h(false, 0, 1), false},
		{"single-numa-node: a common single node", PolicySingleNUMANode, 4, false,
			[]ProviderHints{{"a": {h(true, 1), h(true, 3)}}, {"b": {DontCare(true)}, "c": {h(true, 3), h(true, 0, 3)}}}, h(true, 3), true},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			p, err := New(Options{Policy: c.policy, NUMANodes: nodes(c.n), Distances: dist4, PolicyOptions: PolicyOptions{PreferClosestNUMA: c.closest}})
			if err != nil {
				t.Fatal(err)
			}
			got, admit := p.Merge(c.providers)
			if !got.Equal(c.want) || admit != c.admit {
				t.Fatalf("got %v admit=%v, want %v admit=%v", got, admit, c.want, c.admit)
			}
			ref := naive{policy: c.policy, machine: bitmask.NewNodeSet(nodes(c.n)...), preferClosest: c.closest, dist: dist4}
			rh, ra := ref.merge(c.providers)
			if !rh.Equal(c.want) || ra != c.admit {
				t.Fatalf("reference disagrees with the table: %v admit=%v", rh, ra)
			}
		})
	}
}

// TestSingleNUMAIgnoresClosest is S5d: single-numa-node ignores prefer-closest.
func TestSingleNUMAIgnoresClosest(t *testing.T) {
	d := map[int]map[int]int{0: {0: 20, 1: 30}, 1: {0: 30, 1: 10}}
	hints := []ProviderHints{{"m": {h(true, 0), h(true, 1)}}}
	sn, err := New(Options{Policy: PolicySingleNUMANode, NUMANodes: nodes(2), Distances: d, PolicyOptions: PolicyOptions{PreferClosestNUMA: true}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := sn.Merge(hints); !got.Equal(h(true, 0)) {
		t.Fatalf("single-numa-node: got %v, want {0}", got)
	}
	be, err := New(Options{Policy: PolicyBestEffort, NUMANodes: nodes(2), Distances: d, PolicyOptions: PolicyOptions{PreferClosestNUMA: true}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := be.Merge(hints); !got.Equal(h(true, 1)) {
		t.Fatalf("best-effort with prefer-closest: got %v, want {1}", got)
	}
}

// TestConfiguration is 5.1.10.
func TestConfiguration(t *testing.T) {
	if _, err := NewPolicyOptions(map[string]string{"bogus": "1"}); err == nil {
		t.Error("unknown option accepted")
	}
	if _, err := NewPolicyOptions(map[string]string{OptionPreferClosestNUMANodes: "yes"}); err == nil {
		t.Error("non-ParseBool boolean accepted")
	}
	if o, err := NewPolicyOptions(map[string]string{OptionPreferClosestNUMANodes: "T"}); err != nil || !o.PreferClosestNUMA {
		t.Errorf("ParseBool T: %+v %v", o, err)
	}
	if _, err := NewPolicyOptions(map[string]string{OptionMaxAllowableNUMANodes: "7"}); err == nil {
		t.Error("max-allowable-numa-nodes 7 accepted")
	}
	if o, err := NewPolicyOptions(map[string]string{OptionMaxAllowableNUMANodes: "12"}); err != nil || o.MaxAllowableNUMANodes != 12 {
		t.Errorf("max-allowable 12: %+v %v", o, err)
	}
	if _, err := New(Options{Policy: PolicyBestEffort, NUMANodes: nodes(2), PolicyOptions: PolicyOptions{PreferClosestNUMA: true}}); err == nil ||
		!contains(err.Error(), "cannot discover NUMA topology: error getting NUMA distances from cadvisor") {
		t.Errorf("missing distances: %v", err)
	}
	for _, pol := range []string{PolicyBestEffort, PolicyRestricted, PolicySingleNUMANode} {
		if _, err := New(Options{Policy: pol, NUMANodes: nodes(9)}); err == nil ||
			!contains(err.Error(), "unsupported on machines with more than 8 NUMA Nodes") {
			t.Errorf("%s with 9 nodes: %v", pol, err)
		}
		if _, err := New(Options{Policy: pol, NUMANodes: nodes(12), PolicyOptions: PolicyOptions{MaxAllowableNUMANodes: 12}}); err != nil {
			t.Errorf("%s with 12 nodes and the option: %v", pol, err)
		}
	}
	if _, err := New(Options{Policy: PolicyNone, NUMANodes: nodes(9)}); err != nil {
		t.Errorf("none with 9 nodes: %v", err)
	}
	if _, err := New(Options{Policy: PolicyBestEffort, NUMANodes: nodes(2), PolicyOptions: PolicyOptions{MaxAllowableNUMANodes: 4}}); err == nil {
		t.Error("max allowable 4 accepted")
	}
	if _, err := New(Options{Policy: "strict", NUMANodes: nodes(2)}); err == nil {
		t.Error("unknown policy accepted")
	}
	if _, err := New(Options{Policy: PolicyBestEffort, NUMANodes: nodes(2), TieBreak: TieBreakSpread}); err == nil {
		t.Error("spread without load accepted")
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// randomInput draws a merge problem on 1-8 machine nodes. Ids are drawn
// from 0..9 so that hints may name non-machine nodes (S8) and machines may
// have holes, which exercises the dense mapping.
type randomInput struct {
	policy    string
	machine   []int
	closest   bool
	dist      map[int]map[int]int
	providers []ProviderHints
}

func genInput(r *rand.Rand, maxPerms int) randomInput {
	policies := []string{PolicyBestEffort, PolicyRestricted, PolicySingleNUMANode, PolicyNone}
	for {
		in := randomInput{policy: policies[r.IntN(len(policies))], closest: r.IntN(2) == 0}
		n := 1 + r.IntN(8)
		perm := r.Perm(10)
		if r.IntN(2) == 0 {
			perm = nodes(10)
		}
		in.machine = append([]int(nil), perm[:n]...)
		in.dist = map[int]map[int]int{}
		choices := []int{11, 12, 20, 21, 30}
		for i := 0; i < 10; i++ {
			in.dist[i] = map[int]int{}
		}
		for i := 0; i < 10; i++ {
			in.dist[i][i] = 10
			for j := i + 1; j < 10; j++ {
				d := choices[r.IntN(len(choices))]
				in.dist[i][j], in.dist[j][i] = d, d
			}
		}
		perms := 1
		for p := r.IntN(4); p > 0; p-- {
			switch x := r.IntN(20); {
			case x == 0:
				in.providers = append(in.providers, nil)
				continue
			case x == 1:
				in.providers = append(in.providers, ProviderHints{})
				continue
			}
			ph := ProviderHints{}
			for k := 1 + r.IntN(3); k > 0; k-- {
				name := string(rune('a' + r.IntN(26)))
				switch x := r.IntN(10); {
				case x == 0:
					ph[name] = nil
					continue
				case x == 1:
					ph[name] = []Hint{}
					continue
				}
				var l []Hint
				for c := 1 + r.IntN(5); c > 0; c-- {
					pref := r.IntN(3) != 0
					switch x := r.IntN(20); {
					case x < 3:
						l = append(l, DontCare(pref))
					case x == 3:
						l = append(l, empty(pref))
					default:
						var s bitmask.NodeSet
						for s.IsEmpty() {
							for _, id := range in.machine {
								if r.IntN(3) == 0 {
									s = s.Add(id)
								}
							}
							if r.IntN(8) == 0 {
								s = s.Add(r.IntN(10))
							}
						}
						l = append(l, Hint{Affinity: &s, Preferred: pref})
					}
				}
				ph[name] = l
				perms *= len(l)
				if r.IntN(4) == 0 { // one shared list for two resources, as the memory manager does
					ph[name+"-shared"] = l
					perms *= len(l)
				}
			}
			in.providers = append(in.providers, ph)
		}
		if perms <= maxPerms {
			return in
		}
	}
}

// TestMergeEqualsNaive compares the fast merge with kubelet's literal
// algorithm on 20,000 seeded random inputs: zero differences allowed.
func TestMergeEqualsNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 37))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for i := 0; i < n; i++ {
		in := genInput(r, 4096)
		p, err := New(Options{Policy: in.policy, NUMANodes: in.machine, Distances: in.dist, PolicyOptions: PolicyOptions{PreferClosestNUMA: in.closest}})
		if err != nil {
			t.Fatal(err)
		}
		got, admit := p.Merge(in.providers)
		ref := naive{policy: in.policy, machine: bitmask.NewNodeSet(in.machine...), preferClosest: in.closest, dist: in.dist}
		want, wadmit := ref.merge(in.providers)
		if !got.Equal(want) || admit != wadmit {
			t.Fatalf("input %d (%s, machine %v, closest %v, providers %v): got %v %v, want %v %v",
				i, in.policy, in.machine, in.closest, in.providers, got, admit, want, wadmit)
		}
	}
}

// TestSpreadTieBreak: spread picks the least-loaded of equal-size masks,
// and never overrides size or preference.
func TestSpreadTieBreak(t *testing.T) {
	load := func(s bitmask.NodeSet) float64 {
		if s.Has(0) {
			return 1
		}
		return 0
	}
	p, err := New(Options{Policy: PolicyBestEffort, NUMANodes: nodes(4), TieBreak: TieBreakSpread, Load: load})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := p.Merge([]ProviderHints{{"m": {h(true, 0), h(true, 2), h(true, 1)}}})
	if !got.Equal(h(true, 1)) {
		t.Fatalf("spread: got %v, want {1}", got)
	}
	got, _ = p.Merge([]ProviderHints{{"m": {h(true, 0), h(true, 1, 2)}}})
	if !got.Equal(h(true, 0)) {
		t.Fatalf("spread must not beat size: got %v", got)
	}
}

// TestMergeEqualsNaiveMemoryShaped: inputs shaped like real admissions at
// 1-8 nodes — the memory manager's one list shared by memory and hugepages
// (up to 60 node sets, the smallest size preferred) plus CPU and device
// lists — against kubelet's algorithm.
func TestMergeEqualsNaiveMemoryShaped(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 1))
	cases := 600
	if testing.Short() {
		cases = 60
	}
	policies := []string{PolicyBestEffort, PolicyRestricted, PolicySingleNUMANode}
	for i := 0; i < cases; i++ {
		n := 1 + r.IntN(8)
		all := 1<<n - 1
		var mem []Hint
		minSize := n
		var masks []int
		for m := 1; m <= all && len(masks) < 60; m++ {
			if r.IntN(3) == 0 {
				masks = append(masks, m)
				minSize = min(minSize, popcount(m))
			}
		}
		for _, m := range masks {
			mem = append(mem, NewHint(popcount(m) == minSize, idsOf(m)...))
		}
		providers := []ProviderHints{{"memory": mem, "hugepages-2Mi": mem}}
		var cpu []Hint
		for k := r.IntN(4); k > 0; k-- {
			m := 1 + r.IntN(all)
			cpu = append(cpu, NewHint(r.IntN(2) == 0, idsOf(m)...))
		}
		if cpu != nil || r.IntN(2) == 0 {
			providers = append(providers, ProviderHints{"cpu": cpu})
		}
		if r.IntN(3) == 0 {
			providers = append(providers, ProviderHints{"gpu": {NewHint(true, r.IntN(n))}})
		}
		pol := policies[r.IntN(len(policies))]
		p, err := New(Options{Policy: pol, NUMANodes: nodes(n)})
		if err != nil {
			t.Fatal(err)
		}
		got, ga := p.Merge(providers)
		want, wa := naive{policy: pol, machine: bitmask.NewNodeSet(nodes(n)...)}.merge(providers)
		if !got.Equal(want) || ga != wa {
			t.Fatalf("case %d (%s, %d nodes): got %v %v, want %v %v", i, pol, n, got, ga, want, wa)
		}
	}
}

func popcount(m int) int {
	c := 0
	for ; m != 0; m &= m - 1 {
		c++
	}
	return c
}

func idsOf(m int) []int {
	var ids []int
	for i := 0; m != 0; i, m = i+1, m>>1 {
		if m&1 != 0 {
			ids = append(ids, i)
		}
	}
	return ids
}

// wideInput is a merge problem on n nodes whose ids may lie anywhere in
// 0..1023 (past the first word of a NodeSet, around it, or packed at
// its end), with hints naming foreign nodes anywhere and, half the time,
// one long list of mostly preferred masks (the merge's sorted preferred
// search, foreign masks included) beside short ones.
func wideInput(r *rand.Rand, n, maxPerms int) randomInput {
	policies := []string{PolicyBestEffort, PolicyRestricted, PolicySingleNUMANode}
	for {
		in := randomInput{policy: policies[r.IntN(len(policies))], closest: r.IntN(2) == 0}
		var pool []int
		switch r.IntN(4) {
		case 0:
			pool = r.Perm(bitmask.MaxNodes)[:n]
		case 1:
			for i := range n {
				pool = append(pool, 60+i)
			}
		case 2:
			for i := range n {
				pool = append(pool, bitmask.MaxNodes-n+i)
			}
		default:
			for _, i := range r.Perm(n + 3)[:n] {
				pool = append(pool, 64+2*i)
			}
		}
		in.machine = pool
		choices := []int{11, 12, 20, 21, 30}
		in.dist = map[int]map[int]int{}
		for _, a := range in.machine {
			in.dist[a] = map[int]int{a: 10}
		}
		for i, a := range in.machine {
			for _, b := range in.machine[i+1:] {
				d := choices[r.IntN(len(choices))]
				in.dist[a][b], in.dist[b][a] = d, d
			}
		}
		mask := func(pref bool) Hint {
			var s bitmask.NodeSet
			for s.IsEmpty() {
				for _, id := range in.machine {
					if r.IntN(3) == 0 {
						s = s.Add(id)
					}
				}
				if r.IntN(6) == 0 {
					s = s.Add(r.IntN(bitmask.MaxNodes))
				}
			}
			return Hint{Affinity: &s, Preferred: pref}
		}
		perms := 1
		for p := 1 + r.IntN(3); p > 0; p-- {
			ph := ProviderHints{}
			for k := 1 + r.IntN(2); k > 0; k-- {
				name := string(rune('a' + r.IntN(26)))
				size := 1 + r.IntN(4)
				if r.IntN(4) == 0 {
					size = 20 + r.IntN(40)
				}
				var l []Hint
				for len(l) < size {
					switch x := r.IntN(20); {
					case x == 0:
						l = append(l, DontCare(r.IntN(2) == 0))
					case x < 4 && len(l) > 0: // repeat an earlier mask, as a different hint
						l = append(l, Hint{Affinity: l[r.IntN(len(l))].Affinity, Preferred: r.IntN(4) != 0})
					default:
						l = append(l, mask(r.IntN(4) != 0))
					}
				}
				ph[name] = l
				perms *= len(l)
			}
			in.providers = append(in.providers, ph)
		}
		if perms <= maxPerms {
			return in
		}
	}
}

// TestMergeEqualsNaiveWide: node ids across the whole 0..1023 range,
// foreign nodes anywhere, long lists, prefer-closest up to 16 nodes,
// against kubelet's algorithm (kubelet's own bitmask stops at 64 nodes, so
// test/tmcompare cannot cover this).
func TestMergeEqualsNaiveWide(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 24))
	count := 3000
	if testing.Short() {
		count = 300
	}
	for i := 0; i < count; i++ {
		in := wideInput(r, 1+r.IntN(16), 4096)
		p, err := New(Options{Policy: in.policy, NUMANodes: in.machine, Distances: in.dist, PolicyOptions: PolicyOptions{PreferClosestNUMA: in.closest, MaxAllowableNUMANodes: 16}})
		if err != nil {
			t.Fatal(err)
		}
		got, admit := p.Merge(in.providers)
		want, wadmit := naive{policy: in.policy, machine: bitmask.NewNodeSet(in.machine...), preferClosest: in.closest, dist: in.dist}.merge(in.providers)
		if !got.Equal(want) || admit != wadmit {
			t.Fatalf("input %d (%s, machine %v, closest %v, providers %v): got %v %v, want %v %v",
				i, in.policy, in.machine, in.closest, in.providers, got, admit, want, wadmit)
		}
	}
}
