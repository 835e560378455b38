package preflight

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/kubeapi"
)

// apiServerTimeout bounds the API server's answer to the preflight.
const apiServerTimeout = 5 * time.Second

// APIServerCheck asks the API server the partition's kubelet joins
// (its kubeconfig's, else its bootstrap kubeconfig's) for its version:
// unreachable, or its certificate not trusted by the kubeconfig's CA, the
// kubelet cannot join. A warning, not an error: the kubelet keeps trying,
// and in namespace mode it dials from its partition's namespace, which
// apply makes, not from the host's that the preflight dials from. A
// kubeconfig that does not load is the Kubeconfig check's.
type APIServerCheck struct {
	Configs    *Kubeconfigs // below the host's root
	Part       string
	Kubeconfig string
	Bootstrap  string
	// Dial opens the connections (nil: this process's network namespace).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Asked caches the answers by endpoint (kubeapi.Config.Endpoint):
	// each partition has a kubeconfig of its own once it has joined,
	// but they all name the cluster's server, and an unreachable one is
	// waited for once, not once a partition (at a boot without the
	// network, 5 s each before the kubelets start).
	Asked map[string]error
}

// Name is APIServer.
func (APIServerCheck) Name() string { return NameAPIServer }

// Partition is the partition whose kubelet joins through the server.
func (c APIServerCheck) Partition() string { return c.Part }

// Check asks the server.
func (c APIServerCheck) Check() (warnings, errs []error) {
	file, cfg := c.kubeconfig()
	if cfg == nil {
		return nil, nil
	}
	err, asked := c.Asked[cfg.Endpoint()]
	if !asked {
		err = c.ask(cfg)
		if c.Asked != nil {
			c.Asked[cfg.Endpoint()] = err
		}
	}
	if err != nil {
		where := fsutil.NewRoot(c.Configs.Root()).Path(relative(file))
		return []error{fmt.Errorf("partition %s: the API server %s that %s names does not answer: %w; its kubelet cannot join until it does: check the server's address, the network to it (a firewall, its port) and that the kubeconfig's CA is the cluster's", c.Part, cfg.Server, where, err)}, nil
	}
	return nil, nil
}

// kubeconfig is the kubeconfig the kubelet joins with, loaded: its
// kubeconfig, else its bootstrap one; nil when neither loads.
func (c APIServerCheck) kubeconfig() (string, *kubeapi.Config) {
	for _, f := range []string{c.Kubeconfig, c.Bootstrap} {
		if f == "" {
			continue
		}
		if cfg, err := c.Configs.Load(f); err == nil {
			return f, cfg
		}
	}
	return "", nil
}

func (c APIServerCheck) ask(cfg *kubeapi.Config) error {
	cl := kubeapi.NewClient(cfg, kubeapi.Options{Timeout: apiServerTimeout, DialContext: c.Dial})
	defer cl.Close()
	_, err := cl.Version(context.Background())
	return err
}
