// Command np-deviceplugin is the e2e's node agent, run by a DaemonSet on
// every Node (every numa-partition partition): it advertises a fake
// resource through kubelet's device plugin API and registers a minimal CSI
// node plugin through kubelet's plugins_registry, so that the e2e can check
// that each partition's kubelet accepts node plugins as a machine's does:
// the Node's capacity gets the resource, and its CSINode the driver.
//
//	np-deviceplugin --version
//	np-deviceplugin [--resource e2e.numa-partition.io/token] [--devices 2] \
//	    [--device-plugins-dir /var/lib/kubelet/device-plugins] \
//	    [--plugins-registry-dir /var/lib/kubelet/plugins_registry] \
//	    [--csi-endpoint /var/lib/kubelet/plugins/e2e.numa-partition.io/csi.sock] \
//	    [--node-id $NODE_NAME] [--csi=true]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	dp "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// version is set by the build (-ldflags -X main.version=...).
var version = "dev"

func main() {
	log.SetFlags(0)
	log.SetPrefix("np-deviceplugin: ")
	resource := flag.String("resource", "e2e.numa-partition.io/token", "extended resource name to advertise")
	devices := flag.Int("devices", 2, "number of devices (token-0, token-1, ...)")
	numaNode := flag.Int("numa-node", -1, "NUMA node reported as the devices' topology (-1: none)")
	dpDir := flag.String("device-plugins-dir", dp.DevicePluginPath, "kubelet's device plugin folder (holds kubelet.sock)")
	socket := flag.String("socket", "np-e2e-token.sock", "this plugin's socket name in --device-plugins-dir")
	useCSI := flag.Bool("csi", true, "also register the CSI node plugin through --plugins-registry-dir")
	driver := flag.String("csi-driver", "e2e.numa-partition.io", "CSI driver name")
	registryDir := flag.String("plugins-registry-dir", "/var/lib/kubelet/plugins_registry", "kubelet's plugin registration folder")
	endpoint := flag.String("csi-endpoint", "", "CSI socket path as kubelet sees it (default /var/lib/kubelet/plugins/<driver>/csi.sock)")
	nodeID := flag.String("node-id", os.Getenv("NODE_NAME"), "node ID the CSI driver reports (default $NODE_NAME)")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println("np-deviceplugin", version)
		return
	}
	if *devices < 1 {
		log.Fatal("--devices must be at least 1")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	errs := make(chan error, 2)
	n := 1
	go func() {
		p := &DevicePlugin{Resource: *resource, Count: *devices, Dir: *dpDir, Socket: *socket, NUMANode: *numaNode, Poll: time.Second}
		errs <- p.Run(ctx, nil)
	}()
	if *useCSI {
		n++
		ep := *endpoint
		if ep == "" {
			ep = "/var/lib/kubelet/plugins/" + *driver + "/csi.sock"
		}
		go func() {
			c := &CSINode{Driver: *driver, NodeID: *nodeID, RegistryDir: *registryDir, Endpoint: ep}
			errs <- c.Run(ctx, nil)
		}()
	}
	for ; n > 0; n-- {
		if err := <-errs; err != nil {
			log.Fatal(err)
		}
	}
}
