package planner

import (
	"reflect"
	"strings"
	"testing"

	"github.com/numa-partition/numa-partition/partition/planner/config"
)

// TestEveryOverrideReplacesKubelet: each KubeletOverrides field a
// [[partition]] entry sets replaces [kubelet]'s and points its errors at
// the entry's key; the fields it leaves out keep [kubelet]'s value and
// key. A field merge forgot would fail here (the hand-kept list it
// replaced had to be kept in step with two structs and the reference).
func TestEveryOverrideReplacesKubelet(t *testing.T) {
	fields := reflect.VisibleFields(reflect.TypeOf(config.KubeletOverrides{}))
	for _, set := range fields {
		c := &config.Config{Partitions: []config.PartitionConfig{{}}}
		kubelet := reflect.ValueOf(&c.Kubelet.KubeletOverrides).Elem()
		entry := reflect.ValueOf(&c.Partitions[0].KubeletOverrides).Elem()
		for _, f := range fields {
			kubelet.FieldByIndex(f.Index).Set(sample(t, f.Type, "kubelet"))
		}
		entry.FieldByIndex(set.Index).Set(sample(t, set.Type, "partition"))

		s := merge(c, 0)
		got := reflect.ValueOf(s.k.KubeletOverrides)
		for _, f := range fields {
			key := f.Tag.Get("toml")
			want, wantKey := kubelet.FieldByIndex(f.Index), "kubelet."+key
			if f.Name == set.Name {
				want, wantKey = entry.FieldByIndex(f.Index), "partition[0]."+key
			}
			if !reflect.DeepEqual(got.FieldByIndex(f.Index).Interface(), want.Interface()) || s.key[key] != wantKey {
				t.Errorf("partition sets %s: %s is %v from %q, want %v from %q", set.Tag.Get("toml"), key,
					got.FieldByIndex(f.Index).Interface(), s.key[key], want.Interface(), wantKey)
			}
		}
	}
}

// sample is a set value of type typ that says where it came from.
func sample(t *testing.T, typ reflect.Type, from string) reflect.Value {
	t.Helper()
	switch typ.Kind() {
	case reflect.String:
		return reflect.ValueOf(from)
	case reflect.Pointer:
		n := len(from)
		return reflect.ValueOf(&n)
	case reflect.Map:
		return reflect.ValueOf(map[string]string{"from": from})
	case reflect.Slice:
		return reflect.ValueOf([]string{from})
	}
	t.Fatalf("no sample of a %s", typ)
	return reflect.Value{}
}

// TestOverridesDecodeInBothTables: the embedded KubeletOverrides' keys
// are keys of [kubelet] and of [[partition]] alike, in exact case.
func TestOverridesDecodeInBothTables(t *testing.T) {
	c, err := config.Parse("config.toml", []byte("[kubelet]\nhostname = \"h\"\nmax_pods = 100\n\n[[partition]]\nnodes = [0]\nmax_pods = 50\ntopology_manager_scope = \"pod\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if *c.Kubelet.MaxPods != 100 || *c.Partitions[0].MaxPods != 50 || c.Partitions[0].TopologyManagerScope != "pod" {
		t.Errorf("decoded kubelet max_pods %d, partition max_pods %d scope %q", *c.Kubelet.MaxPods, *c.Partitions[0].MaxPods, c.Partitions[0].TopologyManagerScope)
	}
	_, err = config.Parse("config.toml", []byte("[[partition]]\nnodes = [0]\nMax_Pods = 50\n"))
	if err == nil || !strings.Contains(err.Error(), "max_pods") {
		t.Errorf("a miscased override key: %v", err)
	}
}
