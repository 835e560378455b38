package configref

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
)

// configKeys walks t's toml tags: every key path of the config, tables
// included ("host", "host.hugepages[]", "host.hugepages[].size").
func configKeys(t reflect.Type, prefix string) map[string]reflect.Type {
	keys := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(t) { // embedded structs' keys too
		tag := f.Tag.Get("toml")
		if tag == "" || tag == "-" {
			continue
		}
		key := prefix + tag
		switch {
		case f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(config.NodeList{}):
			keys[key] = f.Type
			for k, v := range configKeys(f.Type, key+".") {
				keys[k] = v
			}
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct && f.Type.Elem() != reflect.TypeOf(config.NodeList{}):
			keys[key+"[]"] = f.Type
			for k, v := range configKeys(f.Type.Elem(), key+"[].") {
				keys[k] = v
			}
		default:
			keys[key] = f.Type
		}
	}
	return keys
}

func TestConfigKeysWalker(t *testing.T) {
	keys := configKeys(reflect.TypeOf(config.Config{}), "")
	for _, k := range []string{"partitioning", "partitioning.mode", "host.hugepages[]", "host.hugepages[].nodes", "partition[]", "partition[].labels", "kubelet.port"} {
		assert.Contains(t, keys, k)
	}
	assert.NotContains(t, keys, "src", "unexported fields are not keys")
	assert.NotContains(t, keys, "partitioning.exclude_nodes.Nodes", "a node list is a value, not a table")
}

// The reference cannot go stale: a key added to Config without an entry,
// or an entry left behind by a removed key, fails here.
func TestReferenceCoversEveryKeyOnce(t *testing.T) {
	keys := configKeys(reflect.TypeOf(config.Config{}), "")
	seen := map[string]bool{}
	for _, r := range Reference() {
		assert.False(t, seen[r.Key], "%s has two entries", r.Key)
		seen[r.Key] = true
		assert.Contains(t, keys, r.Key, "the reference documents %s, which Config does not have", r.Key)
	}
	for k := range keys {
		assert.True(t, seen[k], "config key %s has no entry in Reference (partition/planner/configref/reference.go)", k)
	}
}

// The renderers group keys under the section before them.
func TestReferenceKeysFollowTheirSection(t *testing.T) {
	section := ""
	for _, r := range Reference() {
		if r.IsSection() {
			assert.NotContains(t, r.Key[:max(0, len(r.Key)-2)], "[]", "%s: sections nest only one level below a table", r.Key)
			section = r.Key
			continue
		}
		parent := r.Key[:strings.LastIndex(r.Key, ".")]
		assert.Equal(t, section, parent, "%s is listed under %s", r.Key, section)
	}
}

func TestReferenceTypesMatchTheFields(t *testing.T) {
	keys := configKeys(reflect.TypeOf(config.Config{}), "")
	str := func(t reflect.Type) bool { return t.Kind() == reflect.String }
	strMap := func(t reflect.Type) bool { return t == reflect.TypeOf(map[string]string{}) }
	fits := map[string]func(reflect.Type) bool{
		typeTable:    func(t reflect.Type) bool { return t.Kind() == reflect.Struct },
		typeTables:   func(t reflect.Type) bool { return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct },
		typeString:   str,
		typeTemplate: str,
		typePath:     str,
		typeSize:     str,
		typeCPUList:  str,
		typeInt: func(t reflect.Type) bool {
			if t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			return t.Kind() == reflect.Int || t.Kind() == reflect.Int64
		},
		typeBool:       func(t reflect.Type) bool { return t == reflect.TypeOf((*bool)(nil)) },
		typeNodeList:   func(t reflect.Type) bool { return t == reflect.TypeOf(config.NodeList{}) },
		typeNodeLists:  func(t reflect.Type) bool { return t == reflect.TypeOf([]config.NodeList{}) },
		typeStrings:    func(t reflect.Type) bool { return t == reflect.TypeOf([]string{}) },
		typeStringMap:  strMap,
		typeSizeMap:    strMap,
		typeOptionsMap: strMap,
		typeDropIn:     func(t reflect.Type) bool { return t == reflect.TypeOf(map[string]any{}) },
	}
	for _, r := range Reference() {
		fit, ok := fits[r.Type]
		if assert.True(t, ok, "%s: unknown type %q", r.Key, r.Type) && keys[r.Key] != nil {
			assert.True(t, fit(keys[r.Key]), "%s is documented as %s but is a Go %s", r.Key, r.Type, keys[r.Key])
		}
	}
}

func TestReferenceEntriesAreComplete(t *testing.T) {
	for _, r := range Reference() {
		assert.True(t, strings.HasSuffix(r.Doc, "."), "%s: doc is one or more full sentences: %q", r.Key, r.Doc)
		assert.NotContains(t, r.Doc, "\n", "%s: one paragraph", r.Key)
		if r.IsSection() {
			continue
		}
		assert.True(t, r.Default != nil || r.DefaultText != "", "%s: says neither its default nor what happens without it", r.Key)
		assert.True(t, r.Default != nil || r.Example != "", "%s: the commented configs need a default or an example", r.Key)
		if r.Default != nil && len(r.Allowed) > 0 {
			assert.Contains(t, r.Allowed, r.Default, "%s: the default is not among the allowed values", r.Key)
		}
	}
}

// defaultsTOML sets every key that has a fixed default to that default.
func defaultsTOML(t *testing.T) (string, int) {
	var b strings.Builder
	n := 0
	for _, r := range Reference() {
		switch {
		case r.IsSection() && !strings.HasSuffix(r.Key, "[]"):
			b.WriteString("[" + r.Key + "]\n")
		case r.Default != nil && !strings.Contains(r.Key, "[]"):
			b.WriteString(leafName(r.Key) + " = " + r.DefaultTOML() + "\n")
			n++
		}
	}
	return b.String(), n
}

// The documented defaults are the planner's: writing every one of them
// out plans exactly as the empty config does, on every real machine.
func TestReferenceDefaultsAreThePlannersDefaults(t *testing.T) {
	text, n := defaultsTOML(t)
	require.Greater(t, n, 30, "most keys have a fixed default:\n%s", text)
	c, err := config.Parse("defaults.toml", []byte(text))
	require.NoError(t, err, "%s", text)
	assertPlansLikeDefaults(t, c, "hwloc-32amd64-4s2n4c-cgroup2", "hwloc-nvidiagpunumanodes", "ocp-bm-worker1", "hwloc-128arm-2pa2n8cluster4co")
}

// A default that is not the planner's shows up: the test above is not
// blind to a wrong value.
func TestReferenceDefaultsTestCatchesAWrongDefault(t *testing.T) {
	topo := discoverFixture(t, "hwloc-32amd64-4s2n4c-cgroup2")
	want, err := planner.NewPlan(topo, &config.Config{Kubelet: config.KubeletConfig{Hostname: "h"}})
	require.NoError(t, err)
	text, _ := defaultsTOML(t)
	text = strings.Replace(text, "max_pods = 110\n", "max_pods = 120\n", 1)
	c, err := config.Parse("defaults.toml", []byte(text))
	require.NoError(t, err)
	c.Kubelet.Hostname = "h"
	got, err := planner.NewPlan(topo, c)
	require.NoError(t, err)
	assert.NotEqual(t, want, got)
}

var commentedKeyRe = regexp.MustCompile(`^# ([a-z_]+) = `)

// uncomment turns every commented-out key and table header of a
// commented config into a live one.
func uncomment(text string) (string, int) {
	var out []string
	n := 0
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "# [["):
			l = strings.TrimPrefix(l, "# ")
		case commentedKeyRe.MatchString(l):
			l = strings.TrimPrefix(l, "# ")
			n++
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n"), n
}

func leafCount() int {
	n := 0
	for _, r := range Reference() {
		if !r.IsSection() {
			n++
		}
	}
	return n
}

// Every key of the generic config is commented out, appears once, and
// uncommented (defaults and examples together) is a valid key of its
// table; no prose line looks like a key.
func TestGenericConfigShowsEveryKeyOnce(t *testing.T) {
	text := string(GenericConfig())
	live := regexp.MustCompile(`(?m)^[a-z_]+ = `).FindAllString(text, -1)
	assert.Empty(t, live, "the packaged config sets nothing")
	all, n := uncomment(text)
	assert.Equal(t, leafCount(), n, "one commented line per key")
	_, err := config.Parse("uncommented.toml", []byte(all))
	require.NoError(t, err, "%s", all)
	for _, r := range Reference() {
		if r.Default != nil {
			assert.Contains(t, text, "\n# "+leafName(r.Key)+" = "+r.DefaultTOML()+"\n", "%s shows its default", r.Key)
		}
	}
	for _, l := range strings.Split(text, "\n") {
		assert.LessOrEqual(t, len([]rune(l)), commentWidth, "line too long: %q", l)
	}
}

// The packaged config parses with the loader apply uses and plans on real
// machines exactly as no config does; it is the generated text.
func TestPackagedConfigIsGeneratedLoadsAndPlans(t *testing.T) {
	path := filepath.Join("..", "..", "..", "packaging", "config.toml")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(GenericConfig()), string(data), "packaging/config.toml is stale: run `make generate`")
	c, err := config.LoadFile(path)
	require.NoError(t, err)
	assertPlansLikeDefaults(t, c, "hwloc-32amd64-4s2n4c-cgroup2", "hwloc-nvidiagpunumanodes", "ocp-bm-master")
}

// assertPlansLikeDefaults checks that c plans exactly like the empty config
// on each fixture.
func assertPlansLikeDefaults(t *testing.T, c *config.Config, fixtures ...string) {
	t.Helper()
	for _, fixture := range fixtures {
		t.Run(fixture, func(t *testing.T) {
			topo := discoverFixture(t, fixture)
			want, err := planner.NewPlan(topo, &config.Config{Kubelet: config.KubeletConfig{Hostname: "h"}})
			require.NoError(t, err)
			c.Kubelet.Hostname = "h"
			got, err := planner.NewPlan(topo, c)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

func TestReferenceMarkdownDocumentsEveryKey(t *testing.T) {
	md := string(ReferenceMarkdown())
	anchors := map[string]string{}
	for _, r := range Reference() {
		if r.IsSection() {
			assert.Contains(t, md, "\n## `"+tableHeader(r.Key)+"`\n\n"+r.Doc+"\n")
			continue
		}
		assert.Contains(t, md, "\n### `"+r.Key+"`\n")
		assert.Contains(t, md, "(#"+anchor(r.Key)+")")
		assert.Contains(t, md, "\n"+r.Doc+"\n")
		if r.Default != nil {
			assert.Contains(t, md, "Default: `"+r.DefaultTOML()+"`", r.Key)
		}
		if prev, dup := anchors[anchor(r.Key)]; dup {
			t.Errorf("%s and %s share the anchor #%s", prev, r.Key, anchor(r.Key))
		}
		anchors[anchor(r.Key)] = r.Key
	}
}

func TestReferenceMarkdownIsCheckedIn(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "config-reference.md"))
	require.NoError(t, err)
	assert.Equal(t, string(ReferenceMarkdown()), string(data), "docs/config-reference.md is stale: run `make generate`")
}

func TestAnchor(t *testing.T) {
	for key, want := range map[string]string{
		"kubelet.port":          "kubeletport",
		"kubelet.max_pods":      "kubeletmax_pods",
		"host.hugepages[].size": "hosthugepagessize",
		"partition[].name":      "partitionname",
	} {
		assert.Equal(t, want, anchor(key), key)
	}
}

func TestWrap(t *testing.T) {
	for _, tt := range []struct {
		text  string
		width int
		want  []string
	}{
		{"", 10, []string{""}},
		{"a b c", 10, []string{"a b c"}},
		{"aaaa bbbb cccc", 9, []string{"aaaa bbbb", "cccc"}},
		{"averyveryverylongword x", 5, []string{"averyveryverylongword", "x"}},
		{"  node0: nodes 0, CPUs 1-3", 80, []string{"  node0: nodes 0, CPUs 1-3"}},
		{"  aa bb cc", 7, []string{"  aa bb", "  cc"}},
		{"é é é", 3, []string{"é é", "é"}},
	} {
		assert.Equal(t, tt.want, wrap(tt.text, tt.width), "%q at %d", tt.text, tt.width)
	}
}

// The commented config for a machine has the same keys as the generic one
// (one source), with the machine's live settings and notes.
func TestInitConfigSharesTheReference(t *testing.T) {
	for _, fixture := range []string{"hwloc-nvidiagpunumanodes", "qemu-2node-v2"} {
		text := string(InitConfig(discoverFixture(t, fixture), "worker1", nil))
		commented, n := uncomment(text)
		live := len(regexp.MustCompile(`(?m)^[a-z_]+ = `).FindAllString(text, -1))
		assert.Equal(t, leafCount(), n+live, "%s: every key once, commented or live", fixture)
		_, err := config.Parse("uncommented.toml", []byte(commented))
		require.NoError(t, err, "%s", commented)
		for _, r := range Reference() {
			block := ""
			for _, l := range wrap(keyComment(r), commentWidth-2) {
				block += strings.TrimRight("# "+l, " ") + "\n"
			}
			assert.Contains(t, text, "\n"+block, "%s: %s", fixture, r.Key)
		}
	}
	text := string(InitConfig(discoverFixture(t, "hwloc-nvidiagpunumanodes"), "worker1", nil))
	assert.Contains(t, text, "\n# hostname = \"worker1\"\n")
	assert.Contains(t, text, "\nmode = \"socket\"\n")
	assert.Contains(t, text, "\nreserved_cpus = \"auto\"\n")
	assert.Regexp(t, `have no CPUs \(memory-only`, text)
}

// The reference of kubelet.extra_args lists every flag the tool manages
// (validation.ManagedFlags), which extra_args may not set.
func TestReferenceListsEveryManagedFlag(t *testing.T) {
	var doc string
	for _, r := range Reference() {
		if r.Key == "kubelet.extra_args" {
			doc = r.Doc
		}
	}
	for _, f := range validation.ManagedFlags() {
		assert.Regexp(t, regexp.QuoteMeta(f)+"[,.]", doc)
	}
}

// The reference of kubelet.drop_in lists every field a drop-in may not
// set.
func TestReferenceListsEveryManagedField(t *testing.T) {
	var doc string
	for _, r := range Reference() {
		if r.Key == "kubelet.drop_in" {
			doc = r.Doc
		}
	}
	for _, f := range append(validation.ManagedFields(), validation.DeniedFields()...) {
		assert.Regexp(t, regexp.QuoteMeta(f)+"[,.]", doc)
	}
}
