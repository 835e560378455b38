// Command agentwatch holds, for every Node named in a file, the watches its
// node agents keep open against the API server, which KWOK does not: KWOK
// drives every simulated kubelet from one process with one watch per kind.
// Per Node (what each agent watches, from their informers):
//
//	kubelet     its Node (fieldSelector metadata.name), its pods
//	            (spec.nodeName), all Services (for pods' environment)
//	kube-proxy  all Services, all EndpointSlices, its Node
//	CNI agent   all Nodes (flannel --kube-subnet-mgr; Calico and Cilium
//	            watch every Node or their own per-Node object likewise)
//
// Events received are read and discarded; a watch that ends is re-opened,
// as an informer would, from resourceVersion 0. On SIGTERM or SIGINT it
// prints how many watches it held and how many bytes they brought in.
//
//	agentwatch -server https://127.0.0.1:16443 -cacert ca.crt -cert admin.crt -key admin.key -nodes nodes.txt
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// watchesOf is the watch paths (with their query) one Node's agents hold.
func watchesOf(node string) []string {
	name := url.QueryEscape("metadata.name=" + node)
	bound := url.QueryEscape("spec.nodeName=" + node)
	return []string{
		"/api/v1/nodes?fieldSelector=" + name,      // kubelet
		"/api/v1/pods?fieldSelector=" + bound,      // kubelet
		"/api/v1/services",                         // kubelet
		"/api/v1/services",                         // kube-proxy
		"/apis/discovery.k8s.io/v1/endpointslices", // kube-proxy
		"/api/v1/nodes?fieldSelector=" + name,      // kube-proxy
		"/api/v1/nodes",                            // CNI agent
	}
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "agentwatch:", err)
		os.Exit(1)
	}
}

func run() error {
	server := flag.String("server", "", "API server URL")
	cacert := flag.String("cacert", "", "CA certificate of the API server")
	cert := flag.String("cert", "", "client certificate")
	key := flag.String("key", "", "client key")
	nodesFile := flag.String("nodes", "", "file with one Node name a line")
	rate := flag.Int("rate", 200, "watches opened per second at start")
	flag.Parse()
	if *server == "" || *cacert == "" || *cert == "" || *key == "" || *nodesFile == "" {
		return fmt.Errorf("-server, -cacert, -cert, -key and -nodes are required")
	}
	if *rate <= 0 {
		return fmt.Errorf("-rate %d: must be > 0", *rate)
	}
	nodes, err := readLines(*nodesFile)
	if err != nil {
		return err
	}
	client, err := newClient(*cacert, *cert, *key)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	var open, opened, reopened, bytesIn atomic.Int64
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(*rate))
	defer tick.Stop()
start:
	for _, n := range nodes {
		for _, path := range watchesOf(n) {
			select {
			case <-ctx.Done():
				break start
			case <-tick.C:
			}
			wg.Add(1)
			go func(path string) {
				defer wg.Done()
				for first := true; ctx.Err() == nil; first = false {
					if !first {
						reopened.Add(1)
					}
					open.Add(1)
					watch(ctx, client, *server, path, &bytesIn, &opened)
					open.Add(-1)
					select {
					case <-ctx.Done():
					case <-time.After(time.Second):
					}
				}
			}(path)
		}
	}
	fmt.Fprintf(os.Stderr, "agentwatch: %d watches for %d Nodes requested, %d open so far\n", len(nodes)*len(watchesOf("")), len(nodes), opened.Load())
	<-ctx.Done()
	held := open.Load()
	wg.Wait()
	fmt.Printf("nodes\t%d\nwatches_held\t%d\nwatches_reopened\t%d\nwatch_bytes\t%d\n", len(nodes), held, reopened.Load(), bytesIn.Load())
	return nil
}

// watch holds one watch until it ends or ctx is done, counting its bytes.
func watch(ctx context.Context, c *http.Client, server, path string, bytesIn, opened *atomic.Int64) {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, server+path+sep+"watch=true&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=1800", nil)
	if err != nil {
		return
	}
	// What core components send: protobuf, JSON as the fallback.
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf,application/json")
	resp, err := c.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return
	}
	opened.Add(1)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		bytesIn.Add(int64(n))
		if err != nil {
			return
		}
	}
}

func newClient(cacert, cert, key string) (*http.Client, error) {
	pem, err := os.ReadFile(cacert)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no certificate found", cacert)
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("loading %s and %s: %w", cert, key, err)
	}
	// HTTP/2: watches are multiplexed, a new connection opened when the
	// server's stream limit is reached, as client-go's transport does.
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2: true,
	}
	return &http.Client{Transport: tr}, nil
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if l := strings.TrimSpace(s.Text()); l != "" {
			out = append(out, l)
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no Node names", path)
	}
	return out, nil
}
