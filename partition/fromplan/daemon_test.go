package fromplan

import (
	"reflect"
	"testing"

	"github.com/numa-partition/numa-partition/partition/allocator/daemon"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// The plan's places fill what the command line did not set, and only
// that: a flag given, even to the default, wins.
func TestPlanPlacesKeepTheFlagsGiven(t *testing.T) {
	p := &planner.Partition{
		Labels: map[string]string{"numa-partition.io/partition": "node0"},
		Allocator: planner.Allocator{
			Socket: "/run/plan.sock", StateDir: "/var/lib/plan", SocketGroup: "kube",
			MetricsPort: 9464, SyncBeforeAnswer: true,
		},
	}
	flags := daemon.Options{Socket: "/run/flag.sock", StateDir: "/var/lib/flag", MetricsAddr: "127.0.0.1:1"}

	opts := flags
	planPlaces(&opts, p, Explicit{})
	want := daemon.Options{Socket: "/run/plan.sock", StateDir: "/var/lib/plan", SocketGroup: "kube",
		MetricsAddr: ":9464", SyncBeforeAnswer: true, Labels: p.Labels}
	if !reflect.DeepEqual(opts, want) {
		t.Errorf("no flag given: %+v, want %+v", opts, want)
	}

	opts = flags
	planPlaces(&opts, p, Explicit{Socket: true, StateDir: true, SocketGroup: true, SyncBeforeAnswer: true, MetricsAddr: true})
	want = flags
	want.Labels = p.Labels
	if !reflect.DeepEqual(opts, want) {
		t.Errorf("every flag given: %+v, want %+v", opts, want)
	}

	opts = flags
	opts.Labels = map[string]string{"from": "flag"}
	planPlaces(&opts, p, Explicit{})
	if opts.Labels["from"] != "flag" || len(opts.Labels) != 1 {
		t.Errorf("--label given: labels %v", opts.Labels)
	}
}
