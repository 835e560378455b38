package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	reg "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// CSINode is a minimal CSI node plugin that kubelet finds through its
// plugins_registry folder, as a CSI driver's node-driver-registrar makes
// it: a registration socket (pluginregistration/v1, type CSIPlugin) in
// RegistryDir that names the CSI endpoint, and the endpoint serving CSI
// Identity and Node. kubelet then calls NodeGetInfo and records the driver
// in the Node's CSINode object (spec.drivers[].nodeID) and in its
// csi.volume.kubernetes.io/nodeid annotation. It provisions no volumes.
type CSINode struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedNodeServer

	Driver      string // CSI driver name, e.g. e2e.numa-partition.io
	NodeID      string // what NodeGetInfo answers (the Node's name)
	RegistryDir string // kubelet's plugins_registry folder
	// Endpoint is the CSI socket's path as kubelet sees it (usually
	// /var/lib/kubelet/plugins/<driver>/csi.sock).
	Endpoint string

	mu     sync.Mutex
	status []*reg.RegistrationStatus // what kubelet said, in order
}

// registration is the Registration service on the plugins_registry socket,
// a type of its own so that CSINode's methods stay the CSI ones.
type registration struct {
	reg.UnimplementedRegistrationServer
	c *CSINode
}

// CSIVersions are the CSI spec versions the plugin declares to kubelet.
var CSIVersions = []string{"1.0.0"}

func (r registration) GetInfo(context.Context, *reg.InfoRequest) (*reg.PluginInfo, error) {
	return &reg.PluginInfo{
		Type:              reg.CSIPlugin,
		Name:              r.c.Driver,
		Endpoint:          r.c.Endpoint,
		SupportedVersions: CSIVersions,
	}, nil
}

func (r registration) NotifyRegistrationStatus(_ context.Context, s *reg.RegistrationStatus) (*reg.RegistrationStatusResponse, error) {
	r.c.mu.Lock()
	r.c.status = append(r.c.status, s)
	r.c.mu.Unlock()
	if s.PluginRegistered {
		log.Printf("csi: kubelet registered driver %s (node ID %s)", r.c.Driver, r.c.NodeID)
	} else {
		log.Printf("csi: kubelet refused driver %s: %s", r.c.Driver, s.Error)
	}
	return &reg.RegistrationStatusResponse{}, nil
}

// Status returns what kubelet has said about the registration so far.
func (c *CSINode) Status() []*reg.RegistrationStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*reg.RegistrationStatus(nil), c.status...)
}

// RegistrationSocket is the path of the socket kubelet's plugin watcher finds.
func (c *CSINode) RegistrationSocket() string {
	return filepath.Join(c.RegistryDir, c.Driver+"-reg.sock")
}

func (c *CSINode) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: c.Driver, VendorVersion: version}, nil
}

func (c *CSINode) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	return &csi.GetPluginCapabilitiesResponse{}, nil // node-only: no controller service
}

func (c *CSINode) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

func (c *CSINode) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	log.Printf("csi: NodeGetInfo -> %s", c.NodeID)
	return &csi.NodeGetInfoResponse{NodeId: c.NodeID}, nil
}

func (c *CSINode) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{}, nil
}

// Run serves the CSI endpoint, then the registration socket (kubelet's
// watcher may connect as soon as it appears), until ctx ends; it removes
// both sockets when it returns, which deregisters the driver.
func (c *CSINode) Run(ctx context.Context, ready chan<- error) error {
	if c.NodeID == "" {
		return errors.New("csi: no node ID (set NODE_NAME or --node-id)")
	}
	if err := os.MkdirAll(filepath.Dir(c.Endpoint), 0o750); err != nil {
		return err
	}
	csiSrv := grpc.NewServer()
	csi.RegisterIdentityServer(csiSrv, c)
	csi.RegisterNodeServer(csiSrv, c)
	stopCSI, err := serveUnix(csiSrv, c.Endpoint)
	if err != nil {
		return fmt.Errorf("csi endpoint: %w", err)
	}
	defer stopCSI()
	regSrv := grpc.NewServer()
	reg.RegisterRegistrationServer(regSrv, registration{c: c})
	stopReg, err := serveUnix(regSrv, c.RegistrationSocket())
	if err != nil {
		return fmt.Errorf("registration socket: %w", err)
	}
	defer stopReg()
	log.Printf("csi: driver %s: registration socket %s, endpoint %s", c.Driver, c.RegistrationSocket(), c.Endpoint)
	if ready != nil {
		ready <- nil
	}
	<-ctx.Done()
	return nil
}

// serveUnix serves srv on a fresh socket at path; the returned func stops
// the server and removes the socket.
func serveUnix(srv *grpc.Server, path string) (func(), error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	go srv.Serve(l)
	return func() { srv.Stop(); os.Remove(path) }, nil
}
