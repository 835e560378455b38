package runtimetest

// Pods and containers through CRI, as kubelet creates them, and what the kernel says they run on.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stretchr/testify/require"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// pod is a running pod sandbox.
type pod struct {
	id, uid, name, namespace string
	config                   *cri.PodSandboxConfig
}

// QoS classes as kubelet's cgroup parent names them (cgroupfs driver).
const (
	guaranteed = ""
	burstable  = "burstable"
	besteffort = "besteffort"
)

// runPod runs a pod sandbox on the host's network, in the cgroup kubelet
// (cgroupfs driver) gives a pod of its QoS class, under e.cgroupRoot.
func (e *env) runPod(name, qos string) *pod {
	e.t.Helper()
	return e.runPodUID(name, qos, fmt.Sprintf("7e57%04d-0000-4000-8000-%012d", e.seq.Add(1), os.Getpid()))
}

// runPodUID is runPod with the pod's UID given: the API server's, for a
// pod it holds.
func (e *env) runPodUID(name, qos, uid string) *pod {
	e.t.Helper()
	p := &pod{uid: uid, name: name, namespace: "rt"}
	parent := e.cgroupRoot + "/kubepods"
	if qos != guaranteed {
		parent += "/" + qos
	}
	parent += "/pod" + p.uid
	ns := &cri.NamespaceOption{Network: cri.NamespaceMode_NODE, Pid: cri.NamespaceMode_CONTAINER, Ipc: cri.NamespaceMode_POD}
	p.config = &cri.PodSandboxConfig{
		Metadata:     &cri.PodSandboxMetadata{Name: name, Uid: p.uid, Namespace: p.namespace},
		LogDirectory: filepath.Join(e.logs, p.namespace+"_"+name+"_"+p.uid),
		Labels: map[string]string{"io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": p.namespace,
			"io.kubernetes.pod.uid": p.uid},
		Annotations: map[string]string{"kubernetes.io/config.source": "api", "kubernetes.io/config.seen": time.Now().UTC().Format(time.RFC3339Nano)},
		Linux: &cri.LinuxPodSandboxConfig{CgroupParent: parent,
			SecurityContext: &cri.LinuxSandboxSecurityContext{NamespaceOptions: ns}},
	}
	require.NoError(e.t, os.MkdirAll(p.config.LogDirectory, 0o755))
	resp, err := e.rt.RunPodSandbox(e.ctx(), &cri.RunPodSandboxRequest{Config: p.config})
	require.NoError(e.t, err, "RunPodSandbox %s", name)
	p.id = resp.GetPodSandboxId()
	return p
}

// removePod stops and removes a pod sandbox, as kubelet does when a pod
// is deleted (after its containers).
func (e *env) removePod(p *pod) {
	e.t.Helper()
	_, err := e.rt.StopPodSandbox(e.ctx(), &cri.StopPodSandboxRequest{PodSandboxId: p.id})
	require.NoError(e.t, err)
	_, err = e.rt.RemovePodSandbox(e.ctx(), &cri.RemovePodSandboxRequest{PodSandboxId: p.id})
	require.NoError(e.t, err)
}

// resources are a container's requests and limits (0 = none), and, in
// kubelet mode, the cpuset kubelet's managers chose.
type resources struct {
	cpuRequestMilli, cpuLimitMilli int64
	memoryLimit                    int64
	cpusetCpus, cpusetMems         string
}

// linux is the container's LinuxContainerResources as kubelet computes
// them (kuberuntime's calculateLinuxResources, CFS quota on): cpu.shares
// from the request (the limit when there is no request, at least 2), the
// quota from the limit over a 100 ms period, the memory limit.
func (r resources) linux() *cri.LinuxContainerResources {
	req := r.cpuRequestMilli
	if req == 0 {
		req = r.cpuLimitMilli
	}
	out := &cri.LinuxContainerResources{CpuShares: max(req*1024/1000, 2), MemoryLimitInBytes: r.memoryLimit,
		OomScoreAdj: 1000, CpusetCpus: r.cpusetCpus, CpusetMems: r.cpusetMems}
	if r.cpuLimitMilli > 0 {
		out.CpuPeriod, out.CpuQuota = 100000, r.cpuLimitMilli*100
	}
	if r.cpuRequestMilli > 0 && r.cpuRequestMilli == r.cpuLimitMilli {
		out.OomScoreAdj = -997 // Guaranteed
	}
	return out
}

// ctr is a container of a pod.
type ctr struct {
	id, name string
	pod      *pod
}

// key is the container's allocation in the allocator.
func (c *ctr) key() string { return c.pod.uid + "/" + c.name }

func (e *env) containerConfig(p *pod, name string, r resources) *cri.ContainerConfig {
	ns := &cri.NamespaceOption{Network: cri.NamespaceMode_NODE, Pid: cri.NamespaceMode_CONTAINER, Ipc: cri.NamespaceMode_POD}
	return &cri.ContainerConfig{
		Metadata: &cri.ContainerMetadata{Name: name},
		Image:    &cri.ImageSpec{Image: workloadImage, UserSpecifiedImage: workloadImage},
		Labels: map[string]string{"io.kubernetes.container.name": name, "io.kubernetes.pod.name": p.name,
			"io.kubernetes.pod.namespace": p.namespace, "io.kubernetes.pod.uid": p.uid},
		Annotations: map[string]string{"io.kubernetes.container.restartCount": "0",
			"io.kubernetes.container.terminationMessagePath":   "/dev/termination-log",
			"io.kubernetes.container.terminationMessagePolicy": "File", "io.kubernetes.pod.terminationGracePeriod": "30"},
		LogPath: name + "/0.log",
		Linux: &cri.LinuxContainerConfig{Resources: r.linux(),
			SecurityContext: &cri.LinuxContainerSecurityContext{NamespaceOptions: ns}},
	}
}

// create creates a container (CRI CreateContainer: the NRI plugin's
// CreateContainer decides and adjusts).
func (e *env) create(p *pod, name string, r resources) (*ctr, error) {
	resp, err := e.rt.CreateContainer(e.ctx(), &cri.CreateContainerRequest{PodSandboxId: p.id,
		Config: e.containerConfig(p, name, r), SandboxConfig: p.config})
	if err != nil {
		return nil, err
	}
	return &ctr{id: resp.GetContainerId(), name: name, pod: p}, nil
}

// run creates and starts a container, and waits for the workload's line
// (it has read its cpuset).
func (e *env) run(p *pod, name string, r resources) *ctr {
	e.t.Helper()
	c, err := e.create(p, name, r)
	require.NoError(e.t, err, "CreateContainer %s of pod %s", name, p.name)
	_, err = e.rt.StartContainer(e.ctx(), &cri.StartContainerRequest{ContainerId: c.id})
	require.NoError(e.t, err, "StartContainer %s of pod %s", name, p.name)
	e.waitFor("the workload of "+name+" printing its cpuset", 10*time.Second, func() (bool, string) {
		line, err := e.workloadLine(c)
		return err == nil && line != "", fmt.Sprint(err)
	})
	return c
}

// stop and remove a container, as kubelet does.
func (e *env) stop(c *ctr) {
	e.t.Helper()
	_, err := e.rt.StopContainer(e.ctx(), &cri.StopContainerRequest{ContainerId: c.id, Timeout: 10})
	require.NoError(e.t, err)
}

func (e *env) remove(c *ctr) {
	e.t.Helper()
	_, err := e.rt.RemoveContainer(e.ctx(), &cri.RemoveContainerRequest{ContainerId: c.id})
	require.NoError(e.t, err)
}

// workloadLine is what the workload printed when it started: the cpuset
// the kernel gave it ("cpus=0 mems=0").
func (e *env) workloadLine(c *ctr) (string, error) {
	data, err := os.ReadFile(filepath.Join(c.pod.config.LogDirectory, c.name, "0.log"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		// CRI log format: TIME STREAM TAG MESSAGE.
		if f := strings.SplitN(line, " ", 4); len(f) == 4 && f[1] == "stdout" {
			return f[3], nil
		}
	}
	return "", nil
}

// containerInfo is the verbose part of CRI ContainerStatus (containerd).
type containerInfo struct {
	Pid         int `json:"pid"`
	RuntimeSpec struct {
		Linux struct {
			Resources struct {
				CPU *struct {
					Cpus string `json:"cpus"`
					Mems string `json:"mems"`
				} `json:"cpu"`
			} `json:"resources"`
		} `json:"linux"`
	} `json:"runtimeSpec"`
}

func (e *env) info(c *ctr) containerInfo {
	e.t.Helper()
	st, err := e.rt.ContainerStatus(e.ctx(), &cri.ContainerStatusRequest{ContainerId: c.id, Verbose: true})
	require.NoError(e.t, err)
	var info containerInfo
	require.NoError(e.t, json.Unmarshal([]byte(st.GetInfo()["info"]), &info), "ContainerStatus info of %s", c.name)
	require.NotZero(e.t, info.Pid, "container %s has no pid", c.name)
	return info
}

// specCpuset is the cpuset in the container's OCI spec: what containerd
// created it with after the NRI adjustment.
func (e *env) specCpuset(c *ctr) (cpus, mems string) {
	info := e.info(c)
	if r := info.RuntimeSpec.Linux.Resources.CPU; r != nil {
		return r.Cpus, r.Mems
	}
	return "", ""
}

// cpuset is what the container's process really has: its
// Cpus_allowed_list and Mems_allowed_list, and its cpuset cgroup's
// cpuset.cpus and cpuset.mems.
type cpuset struct {
	procCPUs, cgroupCPUs bitmask.CPUSet
	procMems, cgroupMems bitmask.NodeSet
}

func (s cpuset) String() string {
	return fmt.Sprintf("Cpus_allowed_list=%s cpuset.cpus=%s Mems_allowed_list=%s cpuset.mems=%s",
		s.procCPUs, s.cgroupCPUs, s.procMems, s.cgroupMems)
}

func (e *env) cpuset(c *ctr) (cpuset, error) {
	pid := e.info(c).Pid
	var s cpuset
	st, err := procStatus(pid)
	if err != nil {
		return s, err
	}
	if s.procCPUs, err = bitmask.ParseCPUList(st.cpus); err != nil {
		return s, err
	}
	if s.procMems, err = bitmask.ParseNodeList(st.mems); err != nil {
		return s, err
	}
	dir, err := cpusetCgroup(pid)
	if err != nil {
		return s, err
	}
	for file, parse := range map[string]func(string) error{
		"cpuset.cpus": func(v string) (err error) { s.cgroupCPUs, err = bitmask.ParseCPUList(v); return err },
		"cpuset.mems": func(v string) (err error) { s.cgroupMems, err = bitmask.ParseNodeList(v); return err },
	} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return s, err
		}
		if err := parse(strings.TrimSpace(string(data))); err != nil {
			return s, fmt.Errorf("%s/%s: %w", dir, file, err)
		}
	}
	return s, nil
}

// waitCPUs waits until the container's process runs on want, by both its
// Cpus_allowed_list and its cgroup, and returns what it has.
func (e *env) waitCPUs(c *ctr, want bitmask.CPUSet, why string) cpuset {
	e.t.Helper()
	var s cpuset
	e.waitFor(fmt.Sprintf("container %s on CPUs %s (%s)", c.name, want, why), 10*time.Second, func() (bool, string) {
		var err error
		if s, err = e.cpuset(c); err != nil {
			return false, err.Error()
		}
		return s.procCPUs.Equal(want) && s.cgroupCPUs.Equal(want), s.String()
	})
	return s
}

type status struct{ cpus, mems, state string }

func procStatus(pid int) (status, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return status{}, err
	}
	var s status
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "Cpus_allowed_list":
			s.cpus = strings.TrimSpace(v)
		case "Mems_allowed_list":
			s.mems = strings.TrimSpace(v)
		case "State":
			s.state, _, _ = strings.Cut(strings.TrimSpace(v), " ")
		}
	}
	if s.cpus == "" || s.mems == "" {
		return s, fmt.Errorf("/proc/%d/status has no Cpus_allowed_list or Mems_allowed_list", pid)
	}
	return s, nil
}

func procState(pid int) (string, error) {
	s, err := procStatus(pid)
	return s.state, err
}

// cpusetCgroup is the directory of a process's cpuset cgroup: the v1
// cpuset hierarchy's, else the unified one's.
func cpusetCgroup(pid int) (string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", err
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	mountOf := func(v1 bool) string {
		for _, line := range strings.Split(string(mounts), "\n") {
			f := strings.Fields(line)
			_, after, ok := strings.Cut(line, " - ")
			if !ok || len(f) < 5 {
				continue
			}
			a := strings.Fields(after)
			if v1 && len(a) >= 3 && a[0] == "cgroup" && hasOpt(a[2], "cpuset") {
				return unescapeMount(f[4])
			}
			if !v1 && len(a) >= 1 && a[0] == "cgroup2" {
				return unescapeMount(f[4])
			}
		}
		return ""
	}
	var unified string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if hasOpt(parts[1], "cpuset") {
			if mp := mountOf(true); mp != "" {
				return filepath.Join(mp, parts[2]), nil
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
		}
	}
	if mp := mountOf(false); mp != "" && unified != "" {
		return filepath.Join(mp, unified), nil
	}
	return "", fmt.Errorf("process %d has no cpuset cgroup: %s", pid, data)
}

func hasOpt(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}
