package kubeapi_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
)

// clientAs is a client of s for user cn in groups.
func clientAs(t *testing.T, s *kubeapitest.Server, cn string, groups ...string) *kubeapi.Client {
	t.Helper()
	cert, key := s.CA.Client(t, cn, groups...)
	dir := write(t, t.TempDir(), map[string][]byte{"user.pem": append(cert, key...)})
	write(t, dir, map[string][]byte{"kc": s.Kubeconfig(t, map[string]string{"client-certificate": "user.pem", "client-key": "user.pem"})})
	cfg, err := kubeapi.Load("/", filepath.Join(dir, "kc"))
	if err != nil {
		t.Fatal(err)
	}
	c := kubeapi.NewClient(cfg, kubeapi.Options{})
	t.Cleanup(c.Close)
	return c
}

// logBuffer holds what a test's logger wrote.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newLog() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// TestNodeEvent: an Event on a Node is kubelet's kind: a Node reference
// whose uid is the name, in namespace default, named <node>.<nanos in
// hex>, count 1, both timestamps, numa-partition as source and reporting
// component, the host as source host and reporting instance; a message
// goes on one line and is cut to 1 KiB with an ellipsis, never inside a
// character; a name too long for a DNS subdomain is shortened to one; a
// type other than Normal or Warning is refused.
func TestNodeEvent(t *testing.T) {
	now := time.Unix(1700000000, 123456789)
	e, err := kubeapi.NodeEvent("host-node0", "host", corev1.EventTypeNormal, "Drained", "drained:\n3 pods evicted", now)
	if err != nil {
		t.Fatal(err)
	}
	ref := e.InvolvedObject
	if e.Name != "host-node0.17979cfe3d85cd15" || e.Namespace != "default" || e.Kind != "Event" || e.APIVersion != "v1" ||
		ref.Kind != "Node" || ref.APIVersion != "v1" || ref.Name != "host-node0" || ref.UID != "host-node0" || ref.Namespace != "" ||
		e.Type != "Normal" || e.Reason != "Drained" || e.Message != "drained: 3 pods evicted" || e.Count != 1 ||
		!e.FirstTimestamp.Time.Equal(now) || !e.LastTimestamp.Time.Equal(now) || !e.EventTime.IsZero() ||
		e.Source != (corev1.EventSource{Component: "numa-partition", Host: "host"}) ||
		e.ReportingController != "numa-partition" || e.ReportingInstance != "host" {
		t.Errorf("event %+v", e)
	}

	long := strings.Repeat("é", 600) // 1200 bytes, 2 a character
	e, err = kubeapi.NodeEvent("host-node0", "host", corev1.EventTypeWarning, "DrainFailed", long, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Message) > kubeapi.MaxEventMessage || len(e.Message) < kubeapi.MaxEventMessage-4 || !strings.HasSuffix(e.Message, "é…") || !utf8.ValidString(e.Message) {
		t.Errorf("cut message: %d bytes, ends %q", len(e.Message), e.Message[len(e.Message)-8:])
	}
	if m := kubeapi.EventMessage(strings.Repeat("a", 1024)); m != strings.Repeat("a", 1024) {
		t.Errorf("a message of exactly 1 KiB was cut: %d bytes", len(m))
	}

	node := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61)
	e, err = kubeapi.NodeEvent(node, "host", corev1.EventTypeNormal, "Drained", "", now)
	if err != nil {
		t.Fatal(err)
	}
	if errs := validation.IsDNS1123Subdomain(e.Name); len(errs) > 0 || e.InvolvedObject.Name != node {
		t.Errorf("a long Node's event name %q: %v", e.Name, errs)
	}
	if _, err := kubeapi.NodeEvent("host-node0", "host", "Info", "Drained", "", now); err == nil || !strings.Contains(err.Error(), `event type "Info": allowed are Normal and Warning`) {
		t.Errorf("type Info: %v", err)
	}
	if _, err := kubeapi.NodeEvent("../x", "host", corev1.EventTypeNormal, "Drained", "", now); err == nil {
		t.Error("a Node name that is not one was taken")
	}
}

// TestRecordNodeEvent: a kubelet's credentials and an admin's record
// Events; an identity that may not is logged at warning level with the
// Node, the reason and the API's answer, and the next Event through that
// client is not even sent, while another client's still is.
func TestRecordNodeEvent(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	log, logged := newLog()
	r := &kubeapi.EventRecorder{Host: "host", Log: log}
	ctx := context.Background()
	kubelet := clientAs(t, s, "system:node:host-node0", "system:nodes")
	r.RecordNodeEvent(ctx, kubelet, "host-node0", corev1.EventTypeNormal, "PartitionApplied", "applied generation 2")
	r.RecordNodeEvent(ctx, clientAs(t, s, "kubernetes-admin", "system:masters"), "host-node1", corev1.EventTypeWarning, "DrainFailed", "failed")
	nobody := clientAs(t, s, "nobody")
	r.RecordNodeEvent(ctx, nobody, "host-node0", corev1.EventTypeNormal, "Drained", "drained")
	r.RecordNodeEvent(ctx, nobody, "host-node0", corev1.EventTypeNormal, "Uncordoned", "uncordoned")
	r.RecordNodeEvent(ctx, kubelet, "host-node0", corev1.EventTypeNormal, "Uncordoned", "uncordoned")

	var got []string
	for _, e := range s.Events() {
		got = append(got, e.InvolvedObject.Name+" "+e.Type+" "+e.Reason+": "+e.Message)
		if e.Source.Host != "host" || e.Namespace != "default" {
			t.Errorf("event %+v", e)
		}
	}
	if want := "host-node0 Normal PartitionApplied: applied generation 2\nhost-node1 Warning DrainFailed: failed\nhost-node0 Normal Uncordoned: uncordoned"; strings.Join(got, "\n") != want {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	if n := s.Gets("/api/v1/namespaces/default/events"); n != 4 {
		t.Errorf("%d Event requests, want 4 (the second of the forbidden identity is not sent)", n)
	}
	out := logged.String()
	if strings.Count(out, "level=WARN") != 1 || !strings.Contains(out, `node=host-node0 reason=Drained`) || !strings.Contains(out, "forbidden") ||
		!strings.Contains(out, `User \"nobody\" cannot create resource \"events\"`) {
		t.Errorf("log:\n%s", out)
	}
	var nilRecorder *kubeapi.EventRecorder // a dry run's
	nilRecorder.RecordNodeEvent(ctx, kubelet, "host-node0", corev1.EventTypeNormal, "Drained", "drained")
	if len(s.Events()) != 3 {
		t.Error("a nil recorder recorded")
	}
}

// TestRecordNodeEventBounded: an API server that answers 500 costs its
// one request; one that does not answer costs Timeout per client, and
// all of them together at most Budget, after which Events are dropped
// with one warning.
func TestRecordNodeEventBounded(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	ctx := context.Background()
	log, logged := newLog()
	r := &kubeapi.EventRecorder{Host: "host", Log: log, Timeout: 200 * time.Millisecond, Budget: 500 * time.Millisecond}
	s.RefuseEvents = http.StatusInternalServerError
	c := clientAs(t, s, "system:node:host-node0", "system:nodes")
	r.RecordNodeEvent(ctx, c, "host-node0", corev1.EventTypeNormal, "Drained", "drained")
	if !strings.Contains(logged.String(), "500 Internal Server Error") || len(s.Events()) != 0 {
		t.Errorf("refused: %d events, log:\n%s", len(s.Events()), logged.String())
	}

	release := s.Stall()
	defer release()
	t0 := time.Now()
	for i := range 5 { // a client each: none is dropped for another's failure
		r.RecordNodeEvent(ctx, clientAs(t, s, "system:node:host-node0", "system:nodes"), "host-node0", corev1.EventTypeNormal, "Drained", "drained "+string(rune('0'+i)))
	}
	took := time.Since(t0)
	// The 500 took a little of the budget: two 200 ms timeouts, then
	// less than 100 ms, then nothing.
	if took < 400*time.Millisecond || took > 2*time.Second {
		t.Errorf("five Events to a stalled API server took %s, want about the 500ms budget", took)
	}
	out := logged.String()
	if strings.Count(out, "no answer in 200ms") != 2 || strings.Count(out, "took the 500ms allowed to them") != 1 {
		t.Errorf("log:\n%s", out)
	}
}
