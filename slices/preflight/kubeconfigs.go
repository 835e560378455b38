package preflight

import "github.com/numa-partition/numa-partition/kubeapi"

// Kubeconfigs loads each kubeconfig once for all the checks of one
// preflight: a partition's Kubeconfig and APIServer checks read the same
// files, and the partitions share their bootstrap kubeconfig. Its answers
// are those of the moment it first read a file.
type Kubeconfigs struct {
	root   string // the host's root, as kubeapi.Load takes it
	loaded map[string]loadedKubeconfig
}

type loadedKubeconfig struct {
	cfg *kubeapi.Config
	err error
}

// NewKubeconfigs reads kubeconfigs below root.
func NewKubeconfigs(root string) *Kubeconfigs {
	return &Kubeconfigs{root: root, loaded: map[string]loadedKubeconfig{}}
}

// Root is the host's root the kubeconfigs are read below.
func (k *Kubeconfigs) Root() string { return k.root }

// Load is kubeapi.Load of file below the root, read once.
func (k *Kubeconfigs) Load(file string) (*kubeapi.Config, error) {
	l, ok := k.loaded[file]
	if !ok {
		l.cfg, l.err = kubeapi.Load(k.root, file)
		k.loaded[file] = l
	}
	return l.cfg, l.err
}
