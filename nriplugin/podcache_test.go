package nriplugin

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/kubeapi"
	"github.com/numa-partition/numa-partition/kubeapi/kubeapitest"
	"github.com/numa-partition/numa-partition/partition/allocator/kubevirt"
)

// A stalled API server delays only the pod that needs it: the first
// container of a VM waits for its pod in the cache, without the plugin's
// lock, while container-scope containers are placed and stopped; the
// daemon's metrics say the cache is not synced. When the API server
// answers again, the VM is placed.
func TestStalledAPIServerDelaysOnlyUnitPods(t *testing.T) {
	s := kubeapitest.NewServer(t, kubeapitest.Options{})
	cert, key := s.CA.Client(t, "system:node:host-node0", "system:nodes")
	kc := filepath.Join(t.TempDir(), "kubelet.conf")
	require.NoError(t, os.WriteFile(kc, s.Kubeconfig(t, map[string]string{
		"client-certificate-data": base64.StdEncoding.EncodeToString(cert), "client-key-data": base64.StdEncoding.EncodeToString(key)}), 0o600))
	// The wait is long: a container-scope placement held up by it would
	// return after the VM's, which the test catches without timing it.
	cache := kubeapi.NewPodCache(kc, "host-node0", time.Minute, kubeapi.Options{Timeout: 500 * time.Millisecond},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	release := s.Stall()
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cache.Run(ctx)

	h := &harness{t: t, dir: t.TempDir(), mode: ModeNRI, policy: "single-numa-node", scope: "container", pods: cache}
	h.restart()
	require.NoError(t, h.server.ObservePodCache(cache.Status))

	vm := apiPod("vm1", apiContainer{"compute", 2000, 5 * gi})
	vm.Labels = map[string]string{kubevirt.LauncherLabel: kubevirt.LauncherLabelValue}
	vm.Spec.NodeName = "host-node0"
	vmSandbox := sandbox("vm1", "")
	vmSandbox.Labels = vm.Labels
	vmDone := make(chan error, 1)
	go func() {
		_, _, err := h.create(vmSandbox, nriOf(vm)[0])
		vmDone <- err
	}()
	for cache.Status().Waits == 0 {
		time.Sleep(time.Millisecond)
	}

	// Container scope: placed, stopped and placed again while the VM waits.
	c := ctr("c-web", "p1", "web", 2000, 2*gi, 0)
	mems, cpus, _ := h.mustCreate(sandbox("p1", ""), c)
	assert.Equal(t, []string{"0", "0-1"}, []string{mems, cpus})
	_, err := h.plugin.StopContainer(context.Background(), sandbox("p1", ""), c)
	require.NoError(t, err)
	h.mustCreate(sandbox("p2", ""), ctr("c-db", "p2", "db", 2000, 2*gi, 0))
	select {
	case err := <-vmDone:
		t.Fatalf("the VM's container returned (%v) before the container-scope ones were placed: they waited for it", err)
	default:
	}
	for cache.Status().Errors == 0 {
		time.Sleep(time.Millisecond)
	}
	rec := httptest.NewRecorder()
	h.server.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	assert.Contains(t, rec.Body.String(), `numa_partition_allocator_pod_cache_synced{partition="node0"} 0`)

	s.SetPod(vm)
	release()
	require.NoError(t, <-vmDone)
	assert.Equal(t, []string{"p2/db", "vm1"}, h.allocated())
	for !cache.Status().Synced {
		time.Sleep(time.Millisecond)
	}
	rec = httptest.NewRecorder()
	h.server.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	assert.True(t, strings.Contains(rec.Body.String(), `numa_partition_allocator_pod_cache_synced{partition="node0"} 1`), "synced again")
}
