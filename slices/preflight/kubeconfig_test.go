package preflight

import "testing"

func TestKubeconfigCheck(t *testing.T) {
	root := t.TempDir()
	c := KubeconfigCheck{Configs: NewKubeconfigs(root), Part: "node0", Kubeconfig: "/etc/kubernetes/kubelet-node0.conf", Bootstrap: "/etc/kubernetes/bootstrap-kubelet.conf"}
	wantError(t, fresh(c), "partition node0", "neither", root+"/etc/kubernetes/kubelet-node0.conf", root+"/etc/kubernetes/bootstrap-kubelet.conf", "Joining an existing kubeadm cluster")

	// The bootstrap kubeconfig names a CA that is not there yet.
	put(t, root, "etc/kubernetes/bootstrap-kubelet.conf", bootstrapKubeconfig, 0o600)
	wantError(t, fresh(c), "partition node0", "bootstrap-kubelet.conf", "certificate-authority")
	put(t, root, "etc/kubernetes/pki/ca.crt", caPEM(t), 0o644)
	wantPass(t, fresh(c)) // the first start: kubelet bootstraps

	// A kubeconfig that does not load: kubelet bootstraps again.
	put(t, root, "etc/kubernetes/kubelet-node0.conf", "clusters: [", 0o600)
	wantWarning(t, fresh(c), "partition node0", "kubelet-node0.conf", "joins again with the bootstrap kubeconfig")
	put(t, root, "etc/kubernetes/bootstrap-kubelet.conf", "kind: Config\n", 0o600)
	wantError(t, fresh(c), "kubelet-node0.conf", "bootstrap-kubelet.conf")

	// A kubeconfig that loads needs no bootstrap.
	put(t, root, "etc/kubernetes/kubelet-node0.conf", bootstrapKubeconfig, 0o600)
	wantPass(t, fresh(c))

	c.Bootstrap = ""
	c.Kubeconfig = "/etc/kubernetes/none.conf"
	wantError(t, fresh(c), "does not exist and it has no bootstrap kubeconfig")
}

// fresh is c with nothing read yet: the test changes the files between
// checks, and a preflight reads each once.
func fresh(c KubeconfigCheck) KubeconfigCheck {
	c.Configs = NewKubeconfigs(c.Configs.Root())
	return c
}
