package preflight

import (
	"testing"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

func TestClientCACheck(t *testing.T) {
	root := t.TempDir()
	c := ClientCACheck{Root: fsutil.NewRoot(root), Part: "node0", Path: "/etc/kubernetes/pki/ca.crt", ConfigPath: "/etc/numa-partition/kubelet-node0.yaml"}
	wantError(t, c, "partition node0", root+"/etc/kubernetes/pki/ca.crt", "does not exist", "kubelet-node0.yaml", "copy the cluster's CA there")
	put(t, root, "etc/kubernetes/pki/ca.crt", "not a certificate\n", 0o644)
	wantError(t, c, "holds no PEM certificate")
	put(t, root, "etc/kubernetes/pki/ca.crt", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", 0o644)
	wantError(t, c, "certificate 1")
	put(t, root, "etc/kubernetes/pki/ca.crt", caPEM(t), 0o644)
	wantPass(t, c)
	c.Path = ""
	wantPass(t, c) // no client certificate authentication: nothing to read
}
