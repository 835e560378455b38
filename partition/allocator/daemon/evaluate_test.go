package daemon

import (
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/numa-partition/numa-partition/partition/allocator"
)

// EvaluatePod decides as AdmitPod would and keeps nothing: the state,
// its generation and the checkpoint file are what they were, and the
// pod can then be admitted for real with the same decision.
func TestEvaluatePodKeepsNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := testServer(t, ServerOptions{Partition: "t", Config: smallConfig(), StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.admit(manifest(t, "first")); err != nil {
		t.Fatal(err)
	}
	before, head := s.alloc.State(), s.head
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns", UID: "x"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: l, Limits: l}}}}}
	d, err := s.EvaluatePod(pod, allocator.Hints{})
	if err != nil || !d.Admitted {
		t.Fatalf("evaluation: %+v %v", d, err)
	}
	if !reflect.DeepEqual(s.alloc.State(), before) || s.head != head {
		t.Fatalf("the evaluation changed the state (head %d, was %d)", s.head, head)
	}
	if cp, err := ReadCheckpoint(dir); err != nil || cp.Generation != head {
		t.Fatalf("checkpoint after the evaluation: %+v %v", cp, err)
	}
	admitted, err := s.AdmitPod(pod, allocator.Hints{})
	if err != nil || !reflect.DeepEqual(admitted, d) {
		t.Fatalf("the admission %+v (%v) differs from its evaluation %+v", admitted, err, d)
	}
	// The runtime's admission is timed as the API's are (the evaluation
	// is not an admission; s.admit above is the API's path, timed by
	// its handler).
	var h dto.Metric
	if err := s.metrics.latency.Write(&h); err != nil || h.GetHistogram().GetSampleCount() != 1 {
		t.Errorf("admission_duration_seconds after one AdmitPod: %d samples (%v)", h.GetHistogram().GetSampleCount(), err)
	}
	if _, err := s.EvaluatePod(pod, allocator.Hints{}); err == nil || !strings.Contains(err.Error(), "admitted already") {
		t.Fatalf("evaluating an admitted pod: %v", err)
	}
}
