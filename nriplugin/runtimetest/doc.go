// Package runtimetest tests the NRI plugin (package nriplugin) with the
// allocator daemon (package partition/allocator/daemon) against a real
// containerd 2 and runc, on this machine: the tests start a containerd of
// their own (its own root, state, sockets and NRI socket, cgroupfs, the
// native snapshotter), import the e2e's pause and workload images
// (test/images), run the allocator as a separate process (the test
// binary re-executed) plugged into that containerd, and drive containerd
// through its CRI API as kubelet does: pod sandboxes with the host's
// network (no CNI), containers with kubelet's labels and Linux resources.
// What they assert is what the containers' processes really get: their
// cpuset (Cpus_allowed_list and Mems_allowed_list, the cgroup's
// cpuset.cpus and cpuset.mems, the OCI spec containerd created them
// with) and the allocator's state, through placement (nri mode:
// exclusive cores, the shared pool and its updates, pinned memory),
// release (stop, death, pod removal), refusal, resynchronization after a
// kill -9 of the allocator and after a restart of containerd, and the
// mirror of kubelet's cpusets (kubelet mode).
//
// They need root, runc (/usr/sbin/runc, Debian's runc package) and the
// containerd binaries test/realbin/build.sh builds: NUMA_PARTITION_REALBIN
// names the folder it prints (`make test` sets it when the folder is
// there; .ci/run builds it first). Without them every test is skipped,
// loudly, saying which is missing.
//
// BenchmarkContainerCreate (create_bench_test.go; only with -bench, e.g.
// `go test ./nriplugin/runtimetest/ -run '^$' -bench ContainerCreate
// -benchtime 1x -timeout 60m`) measures what kubelet waits for, CRI
// CreateContainer, over 1,000 containers a configuration
// (NUMA_PARTITION_RUNTIMETEST_SAMPLES lowers it): without the plugin and
// with it in nri mode, the plugin's own decisions timed in the
// allocator; then with the plugin's pod cache on a real kube-apiserver
// and etcd (the same folder's) that is SIGSTOPped half of the time, in
// container scope and in pod scope.
package runtimetest
