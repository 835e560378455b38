package main

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	dp "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	reg "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// fakeKubelet is kubelet's device plugin Registration service on
// dir/kubelet.sock: it records every RegisterRequest.
type fakeKubelet struct {
	dp.UnimplementedRegistrationServer
	requests chan *dp.RegisterRequest
	srv      *grpc.Server
}

func (k *fakeKubelet) Register(_ context.Context, r *dp.RegisterRequest) (*dp.Empty, error) {
	k.requests <- r
	return &dp.Empty{}, nil
}

func startFakeKubelet(t *testing.T, dir string) *fakeKubelet {
	t.Helper()
	sock := filepath.Join(dir, "kubelet.sock")
	os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	k := &fakeKubelet{requests: make(chan *dp.RegisterRequest, 10), srv: grpc.NewServer()}
	dp.RegisterRegistrationServer(k.srv, k)
	go k.srv.Serve(l)
	t.Cleanup(k.srv.Stop)
	return k
}

func (k *fakeKubelet) next(t *testing.T) *dp.RegisterRequest {
	t.Helper()
	select {
	case r := <-k.requests:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the plugin did not register within 10 s")
		return nil
	}
}

func dial(t *testing.T, path string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func startPlugin(t *testing.T, p *DevicePlugin) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, nil) }()
	stop = func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return within 10 s of its context ending")
		}
	}
	t.Cleanup(stop)
	return stop
}

// What kubelet sees of the plugin: the registration, then the device list
// on the endpoint it names, then allocations.
func TestRegistersTokensWithKubelet(t *testing.T) {
	dir := t.TempDir()
	kubelet := startFakeKubelet(t, dir)
	p := &DevicePlugin{Resource: "e2e.numa-partition.io/token", Count: 2, Dir: dir, Socket: "np-e2e-token.sock", NUMANode: -1, Poll: 50 * time.Millisecond}
	startPlugin(t, p)

	r := kubelet.next(t)
	if r.ResourceName != "e2e.numa-partition.io/token" || r.Version != "v1beta1" || r.Endpoint != "np-e2e-token.sock" {
		t.Fatalf("RegisterRequest = {ResourceName %q, Version %q, Endpoint %q}, want e2e.numa-partition.io/token, v1beta1, np-e2e-token.sock",
			r.ResourceName, r.Version, r.Endpoint)
	}
	if r.Options.GetPreStartRequired() || r.Options.GetGetPreferredAllocationAvailable() {
		t.Errorf("RegisterRequest.Options = %v, want none", r.Options)
	}

	// kubelet dials the endpoint in its device-plugins folder.
	c := dp.NewDevicePluginClient(dial(t, filepath.Join(dir, r.Endpoint)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.GetDevicePluginOptions(ctx, &dp.Empty{}); err != nil {
		t.Fatalf("GetDevicePluginOptions: %v", err)
	}
	stream, err := c.ListAndWatch(ctx, &dp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatalf("ListAndWatch: %v", err)
	}
	var ids []string
	for _, d := range resp.Devices {
		if d.Health != dp.Healthy {
			t.Errorf("device %s is %s, want Healthy", d.ID, d.Health)
		}
		if d.Topology != nil {
			t.Errorf("device %s has topology %v, want none (NUMANode -1)", d.ID, d.Topology)
		}
		ids = append(ids, d.ID)
	}
	if len(ids) != 2 || ids[0] != "token-0" || ids[1] != "token-1" {
		t.Fatalf("ListAndWatch devices = %v, want [token-0 token-1]", ids)
	}

	a, err := c.Allocate(ctx, &dp.AllocateRequest{ContainerRequests: []*dp.ContainerAllocateRequest{
		{DevicesIds: []string{"token-1"}}, {DevicesIds: []string{"token-0", "token-1"}},
	}})
	if err != nil {
		t.Fatalf("Allocate: %v", err)
	}
	if len(a.ContainerResponses) != 2 ||
		a.ContainerResponses[0].Envs[EnvDevices] != "token-1" ||
		a.ContainerResponses[1].Envs[EnvDevices] != "token-0,token-1" {
		t.Fatalf("Allocate = %v, want %s=token-1 and %s=token-0,token-1", a.ContainerResponses, EnvDevices, EnvDevices)
	}
	if _, err := c.Allocate(ctx, &dp.AllocateRequest{ContainerRequests: []*dp.ContainerAllocateRequest{{DevicesIds: []string{"token-2"}}}}); err == nil {
		t.Error("Allocate of token-2 (no such device) succeeded")
	}
}

// A restarted kubelet removes every socket in its folder and comes back on
// a new kubelet.sock: the plugin serves and registers again.
func TestRegistersAgainAfterKubeletRestart(t *testing.T) {
	dir := t.TempDir()
	kubelet := startFakeKubelet(t, dir)
	p := &DevicePlugin{Resource: "e2e.numa-partition.io/token", Count: 2, Dir: dir, Socket: "np-e2e-token.sock", NUMANode: 1, Poll: 50 * time.Millisecond}
	startPlugin(t, p)
	kubelet.next(t)
	stream, err := dp.NewDevicePluginClient(dial(t, filepath.Join(dir, "np-e2e-token.sock"))).ListAndWatch(context.Background(), &dp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if topo := resp.Devices[0].Topology; topo == nil || len(topo.Nodes) != 1 || topo.Nodes[0].ID != 1 {
		t.Errorf("device topology = %v, want NUMA node 1", topo)
	}

	kubelet.srv.Stop()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.Remove(filepath.Join(dir, e.Name()))
	}
	kubelet = startFakeKubelet(t, dir)
	if r := kubelet.next(t); r.ResourceName != "e2e.numa-partition.io/token" || r.Endpoint != "np-e2e-token.sock" {
		t.Fatalf("re-registration = %v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "np-e2e-token.sock")); err != nil {
		t.Fatalf("after re-registration: %v", err)
	}
	// The old server's stream ended with it.
	if _, err := stream.Recv(); err == nil {
		t.Error("the old ListAndWatch stream still delivers after the restart")
	}
}

// A plugin started before kubelet keeps trying until kubelet.sock answers.
func TestRetriesUntilKubeletIsUp(t *testing.T) {
	dir := t.TempDir()
	p := &DevicePlugin{Resource: "e2e.numa-partition.io/token", Count: 2, Dir: dir, Socket: "np-e2e-token.sock", NUMANode: -1, Poll: 50 * time.Millisecond}
	startPlugin(t, p)
	time.Sleep(200 * time.Millisecond) // a few failed attempts
	kubelet := startFakeKubelet(t, dir)
	if r := kubelet.next(t); r.ResourceName != "e2e.numa-partition.io/token" {
		t.Fatalf("registration = %v", r)
	}
}

// What kubelet's plugin watcher and CSI handler do with the registration
// socket: GetInfo, NodeGetInfo on the endpoint it names, then the status.
func TestCSIRegistration(t *testing.T) {
	dir := t.TempDir()
	c := &CSINode{
		Driver:      "e2e.numa-partition.io",
		NodeID:      "e2e-v2-node0",
		RegistryDir: filepath.Join(dir, "plugins_registry"),
		Endpoint:    filepath.Join(dir, "plugins", "e2e.numa-partition.io", "csi.sock"),
	}
	if err := os.Mkdir(c.RegistryDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan error, 1)
	go func() { done <- c.Run(ctx, ready) }()
	if err := <-ready; err != nil {
		t.Fatal(err)
	}

	// The watcher finds the socket in the folder it watches.
	entries, err := os.ReadDir(c.RegistryDir)
	if err != nil || len(entries) != 1 || entries[0].Name() != "e2e.numa-partition.io-reg.sock" {
		t.Fatalf("plugins_registry holds %v (%v), want e2e.numa-partition.io-reg.sock", entries, err)
	}
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	rc := reg.NewRegistrationClient(dial(t, filepath.Join(c.RegistryDir, entries[0].Name())))
	info, err := rc.GetInfo(rctx, &reg.InfoRequest{})
	if err != nil {
		t.Fatalf("GetInfo: %v", err)
	}
	if info.Type != reg.CSIPlugin || info.Name != "e2e.numa-partition.io" || info.Endpoint != c.Endpoint ||
		len(info.SupportedVersions) != 1 || info.SupportedVersions[0] != "1.0.0" {
		t.Fatalf("GetInfo = %v, want CSIPlugin e2e.numa-partition.io at %s, versions [1.0.0]", info, c.Endpoint)
	}

	conn := dial(t, info.Endpoint)
	ni, err := csi.NewNodeClient(conn).NodeGetInfo(rctx, &csi.NodeGetInfoRequest{})
	if err != nil {
		t.Fatalf("NodeGetInfo: %v", err)
	}
	if ni.NodeId != "e2e-v2-node0" || ni.MaxVolumesPerNode != 0 || ni.AccessibleTopology != nil {
		t.Fatalf("NodeGetInfo = %v, want node ID e2e-v2-node0, no limit, no topology", ni)
	}
	pi, err := csi.NewIdentityClient(conn).GetPluginInfo(rctx, &csi.GetPluginInfoRequest{})
	if err != nil || pi.Name != "e2e.numa-partition.io" {
		t.Fatalf("GetPluginInfo = %v, %v", pi, err)
	}
	if _, err := csi.NewNodeClient(conn).NodePublishVolume(rctx, &csi.NodePublishVolumeRequest{}); err == nil {
		t.Error("NodePublishVolume succeeded on a driver that has no volumes")
	}

	if _, err := rc.NotifyRegistrationStatus(rctx, &reg.RegistrationStatus{PluginRegistered: true}); err != nil {
		t.Fatal(err)
	}
	if s := c.Status(); len(s) != 1 || !s[0].PluginRegistered {
		t.Fatalf("Status = %v, want one registered", s)
	}

	// Stopping removes both sockets: the watcher deregisters the driver.
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{c.RegistrationSocket(), c.Endpoint} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after stop: %v, want gone", p, err)
		}
	}
}

func TestCSINeedsNodeID(t *testing.T) {
	c := &CSINode{Driver: "d", RegistryDir: t.TempDir(), Endpoint: filepath.Join(t.TempDir(), "csi.sock")}
	if err := c.Run(context.Background(), nil); err == nil {
		t.Fatal("Run without a node ID succeeded")
	}
}
