package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	dp "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// EnvDevices is the variable Allocate sets in a container: the IDs of the
// devices it was given, comma separated, e.g. "token-0,token-1".
const EnvDevices = "NP_E2E_TOKENS"

// DevicePlugin serves a fake resource of Count devices ("token-0"…) on a
// socket in Dir (kubelet's device-plugins folder) and registers it with
// kubelet through Dir/kubelet.sock. kubelet deletes every socket in Dir when
// it restarts; Run then serves and registers again.
type DevicePlugin struct {
	dp.UnimplementedDevicePluginServer

	Resource string // e.g. e2e.numa-partition.io/token
	Count    int    // number of devices
	Dir      string // kubelet's device-plugins folder
	Socket   string // this plugin's socket name in Dir, e.g. np-e2e-token.sock
	// NUMANode, when ≥ 0, is reported as every device's topology, so
	// kubelet's Topology Manager can align the devices with CPUs.
	NUMANode int
	// Poll is how often Run checks that its socket is still there.
	Poll time.Duration

	mu      sync.Mutex
	stopped chan struct{} // closed when the current server stops (ends ListAndWatch streams)
}

// Devices returns the devices the plugin advertises, all healthy.
func (p *DevicePlugin) Devices() []*dp.Device {
	devs := make([]*dp.Device, p.Count)
	for i := range devs {
		devs[i] = &dp.Device{ID: fmt.Sprintf("token-%d", i), Health: dp.Healthy}
		if p.NUMANode >= 0 {
			devs[i].Topology = &dp.TopologyInfo{Nodes: []*dp.NUMANode{{ID: int64(p.NUMANode)}}}
		}
	}
	return devs
}

// GetDevicePluginOptions: no PreStartContainer, no preferred allocation.
func (p *DevicePlugin) GetDevicePluginOptions(context.Context, *dp.Empty) (*dp.DevicePluginOptions, error) {
	return &dp.DevicePluginOptions{}, nil
}

// ListAndWatch sends the device list once and then holds the stream open
// until kubelet closes it or the server stops: the devices never change.
func (p *DevicePlugin) ListAndWatch(_ *dp.Empty, s grpc.ServerStreamingServer[dp.ListAndWatchResponse]) error {
	p.mu.Lock()
	stopped := p.stopped
	p.mu.Unlock()
	if err := s.Send(&dp.ListAndWatchResponse{Devices: p.Devices()}); err != nil {
		return err
	}
	select {
	case <-s.Context().Done():
	case <-stopped:
	}
	return nil
}

// Allocate hands each container its device IDs in EnvDevices. A device ID
// the plugin does not have is an error.
func (p *DevicePlugin) Allocate(_ context.Context, req *dp.AllocateRequest) (*dp.AllocateResponse, error) {
	known := map[string]bool{}
	for _, d := range p.Devices() {
		known[d.ID] = true
	}
	resp := &dp.AllocateResponse{}
	for _, c := range req.ContainerRequests {
		for _, id := range c.DevicesIds {
			if !known[id] {
				return nil, fmt.Errorf("allocate: unknown device %q of %s", id, p.Resource)
			}
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &dp.ContainerAllocateResponse{
			Envs: map[string]string{EnvDevices: strings.Join(c.DevicesIds, ",")},
		})
	}
	log.Printf("device plugin: allocated %v", req.ContainerRequests)
	return resp, nil
}

// Run serves and registers until ctx ends; each time the socket disappears
// (kubelet restarted) it serves and registers again. Registration failures
// are retried every Poll. ready, if not nil, gets nil after each successful
// registration, or the error of a failed attempt.
func (p *DevicePlugin) Run(ctx context.Context, ready chan<- error) error {
	poll := p.Poll
	if poll == 0 {
		poll = time.Second
	}
	sock := filepath.Join(p.Dir, p.Socket)
	for {
		srv, err := p.serve(sock)
		if err == nil {
			err = p.register(ctx)
		}
		if ready != nil {
			ready <- err
		}
		if err != nil {
			log.Printf("device plugin: %v (retrying in %s)", err, poll)
			if srv != nil {
				p.stop(srv)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(poll):
			}
			continue
		}
		log.Printf("device plugin: registered %s (%d devices) at %s", p.Resource, p.Count, sock)
		// Watch the socket: kubelet removes it when it restarts.
		for gone := false; !gone; {
			select {
			case <-ctx.Done():
				p.stop(srv)
				return nil
			case <-time.After(poll):
			}
			if _, err := os.Lstat(sock); err != nil {
				log.Printf("device plugin: %s is gone (kubelet restarted?): serving and registering again", sock)
				gone = true
			}
		}
		p.stop(srv)
	}
}

func (p *DevicePlugin) serve(sock string) (*grpc.Server, error) {
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer()
	dp.RegisterDevicePluginServer(srv, p)
	p.mu.Lock()
	p.stopped = make(chan struct{})
	p.mu.Unlock()
	go srv.Serve(l)
	return srv, nil
}

func (p *DevicePlugin) stop(srv *grpc.Server) {
	p.mu.Lock()
	close(p.stopped)
	p.mu.Unlock()
	srv.Stop()
}

// register tells kubelet (Dir/kubelet.sock) about the plugin's socket.
func (p *DevicePlugin) register(ctx context.Context) error {
	kubelet := filepath.Join(p.Dir, filepath.Base(dp.KubeletSocket))
	conn, err := grpc.NewClient("unix://"+kubelet, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = dp.NewRegistrationClient(conn).Register(ctx, &dp.RegisterRequest{
		Version:      dp.Version,
		Endpoint:     p.Socket,
		ResourceName: p.Resource,
		Options:      &dp.DevicePluginOptions{},
	}, grpc.WaitForReady(false))
	if err != nil {
		return fmt.Errorf("register %s with %s: %w", p.Resource, kubelet, err)
	}
	return nil
}
