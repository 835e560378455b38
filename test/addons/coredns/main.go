// Command coredns is CoreDNS built with the plugins the e2e's Corefile
// (../manifests/coredns.yaml, kubeadm's default Corefile) names, plus log
// and hosts, which clusters commonly add: not every plugin of the release
// binary. The release's plugin list (core/plugin, 60 plugins with the
// cloud providers' SDKs, dnstap, tracing and etcd) is 1,403 packages to
// compile; this one is 814, and its image is smaller, which the e2e's
// emulated CPU pays for once per partition when it imports it. The
// server, the plugins and their order (core/dnsserver's directives) are
// CoreDNS's own: main here is the release's coredns.go with a shorter
// import list, as CoreDNS documents for custom builds.
package main

import (
	_ "github.com/coredns/caddy/onevent"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"

	"github.com/coredns/coredns/coremain"
)

func main() {
	coremain.Run()
}
