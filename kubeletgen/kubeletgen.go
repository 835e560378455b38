// Package kubeletgen builds each partition's KubeletConfiguration with the
// official k8s.io/kubelet/config/v1beta1 types. derive.go holds the
// arithmetic that makes every kubelet offer exactly its partition; this
// file places the results and the plan's per-instance settings.
package kubeletgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/numa-partition/numa-partition/numa/units"
	"github.com/numa-partition/numa-partition/partition/planner"
)

// ClientCAFile is where kubeadm puts the cluster CA; kubelet needs it to
// accept the API server's client certificate (logs, exec, port-forward).
const ClientCAFile = "/etc/kubernetes/pki/ca.crt"

// Config builds partition p's KubeletConfiguration.
func Config(plan *planner.Plan, p *planner.Partition) (*kubeletv1beta1.KubeletConfiguration, error) {
	c := &kubeletv1beta1.KubeletConfiguration{}
	c.Kind = "KubeletConfiguration"
	c.APIVersion = kubeletv1beta1.SchemeGroupVersion.String()
	identity(c, plan, p)
	secureServing(c)
	if err := resources(c, plan, p); err != nil {
		return nil, err
	}
	if err := topology(c, p); err != nil {
		return nil, err
	}
	return c, nil
}

// identity is what must differ between sibling kubelets, and what the
// host they share needs of each.
func identity(c *kubeletv1beta1.KubeletConfiguration, plan *planner.Plan, p *planner.Partition) {
	k := &p.Kubelet
	c.CgroupDriver = "systemd"
	c.CgroupRoot = k.CgroupRoot
	c.CgroupsPerQOS = ptr(true)
	c.Port = int32(k.Port)
	c.HealthzPort = ptr(int32(k.HealthzPort))
	c.HealthzBindAddress = "127.0.0.1"
	c.ReadOnlyPort = int32(k.ReadOnlyPort)
	c.ContainerRuntimeEndpoint = p.Runtime.Endpoint
	c.StaticPodPath = k.StaticPodPath
	c.PodLogsDir = k.PodLogsDir
	if k.MaxPods > 0 {
		// An int32 by the planner's rule (validation.MaxPodsProblem),
		// held where the plan entered: the conversion cannot wrap.
		c.MaxPods = int32(k.MaxPods)
	}
	c.RegisterWithTaints = Taints(p.Taints)
	c.ClusterDNS = append([]string(nil), k.ClusterDNS...)
	c.ClusterDomain = k.ClusterDomain
	if p.Network != nil {
		// In the partition's namespace, the host's loopback resolver is
		// out of reach: the plan names the file that works there.
		c.ResolverConfig = &plan.Network.ResolvConf
	}
	// kubelet >= 1.35 refuses to start on a cgroup v1 (or hybrid) host
	// unless told otherwise. numa-partition supports such hosts (apply
	// enforces the partitions through cpuset v1 groups, docs/apply.md),
	// so their kubelets must start; on cgroup v2 the field does nothing.
	// plan and apply warn on v1 hosts that Kubernetes is leaving v1.
	c.FailCgroupV1 = ptr(false)
}

// secureServing is kubelet's API as kubeadm sets it up.
func secureServing(c *kubeletv1beta1.KubeletConfiguration) {
	c.Authentication.Anonymous.Enabled = ptr(false)
	c.Authentication.Webhook.Enabled = ptr(true)
	c.Authentication.X509.ClientCAFile = ClientCAFile
	c.Authorization.Mode = kubeletv1beta1.KubeletAuthorizationModeWebhook
	c.RotateCertificates = true
}

// resources are the CPU, memory, storage and pid reservations and
// managers: what the kubelet is shown (MachineOf) decides them.
func resources(c *kubeletv1beta1.KubeletConfiguration, plan *planner.Plan, p *planner.Partition) error {
	k := &p.Kubelet
	c.CPUManagerPolicy = k.CPUManagerPolicy
	mach, err := MachineOf(plan, p)
	if err != nil {
		return err
	}
	reservedCPUs, err := ReservedSystemCPUs(mach, p)
	if err != nil {
		return err
	}
	c.ReservedSystemCPUs = reservedCPUs.String()
	if len(k.CPUManagerPolicyOptions) > 0 {
		c.CPUManagerPolicyOptions = maps.Clone(k.CPUManagerPolicyOptions)
	}

	nodes, total, err := ReservedMemory(mach, p)
	if err != nil {
		return err
	}
	kube, system, eviction, err := MemoryReservations(p, mach, total)
	if err != nil {
		return err
	}
	c.KubeReserved = map[string]string{"memory": units.FormatBytes(kube)}
	c.SystemReserved = map[string]string{"memory": units.FormatBytes(system)}
	c.EvictionHard = map[string]string{"memory.available": units.FormatBytes(eviction)}
	// The rest of the filesystem and of the pid space is the other
	// partitions' and the host's (partition/planner/shares.go): reserved as
	// "system", so allocatable is the share. nodefs.available is kubelet's
	// default, written out because the share's arithmetic depends on it.
	if es := p.EphemeralStorage; es != nil {
		c.SystemReserved["ephemeral-storage"] = strconv.FormatUint(es.SystemReservedBytes, 10)
		c.EvictionHard["nodefs.available"] = strconv.Itoa(planner.NodefsEvictionPercent) + "%"
	}
	if pids := p.PIDs; pids != nil {
		c.SystemReserved["pid"] = strconv.FormatUint(pids.SystemReserved, 10)
	}
	// Without this, naming one hard threshold drops kubelet's other
	// defaults (nodefs, imagefs).
	c.MergeDefaultEvictionSettings = ptr(true)
	c.EnforceNodeAllocatable = []string{"pods"}
	c.MemoryManagerPolicy = k.MemoryManagerPolicy
	if k.MemoryManagerPolicy == "Static" {
		for _, n := range nodes {
			c.ReservedMemory = append(c.ReservedMemory, kubeletv1beta1.MemoryReservation{
				NumaNode: int32(n.Node),
				Limits:   corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(int64(n.Bytes), resource.BinarySI)},
			})
		}
	}
	return nil
}

// topology is the Topology Manager's policy, scope and options.
func topology(c *kubeletv1beta1.KubeletConfiguration, p *planner.Partition) error {
	c.TopologyManagerPolicy = p.Kubelet.TopologyManagerPolicy
	c.TopologyManagerScope = p.Kubelet.TopologyManagerScope
	opts, err := TopologyManagerPolicyOptions(p)
	if err != nil {
		return err
	}
	if len(opts) > 0 {
		c.TopologyManagerPolicyOptions = opts
	}
	return nil
}

// Taints are the plan's taints as kubelet's config carries them.
func Taints(ts []planner.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range ts {
		out = append(out, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return out
}

// Marshal writes c as YAML with a header naming the partition, leaving
// out the zero values the v1beta1 types would otherwise spell out
// ("syncFrequency: 0s"), so the file shows only what was decided.
func Marshal(partitionName string, c *kubeletv1beta1.KubeletConfiguration) ([]byte, error) {
	// Through JSON (what sigs.k8s.io/yaml does anyway) to a tree, pruned,
	// then to YAML once.
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encoding KubeletConfiguration of %s: %w", partitionName, err)
	}
	var tree map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("re-reading KubeletConfiguration of %s: %w", partitionName, err)
	}
	// logging is never set here; its zero value is all "0".
	delete(tree, "logging")
	pruneZero(tree)
	body, err := yaml.Marshal(tree)
	if err != nil {
		return nil, fmt.Errorf("encoding KubeletConfiguration of %s: %w", partitionName, err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# KubeletConfiguration of numa-partition %s, rendered by numa-partition;\n", partitionName)
	b.WriteString("# `numa-partition apply` overwrites this file. See docs/render.md for the\n")
	b.WriteString("# derivation of reservedSystemCPUs, reservedMemory and the reservations.\n")
	b.Write(body)
	return b.Bytes(), nil
}

// pruneZero removes zero durations, empty strings and maps left empty.
// Numbers are kept: every number this package sets means something.
func pruneZero(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case string:
			if x == "" || x == "0s" {
				delete(m, k)
			}
		case map[string]any:
			pruneZero(x)
			if len(x) == 0 {
				delete(m, k)
			}
		}
	}
}

// Unmarshal decodes a rendered file strictly with the official types:
// an unknown or misspelt field is an error.
func Unmarshal(b []byte) (*kubeletv1beta1.KubeletConfiguration, error) {
	c := &kubeletv1beta1.KubeletConfiguration{}
	if err := yaml.UnmarshalStrict(b, c); err != nil {
		return nil, fmt.Errorf("decoding KubeletConfiguration: %w", err)
	}
	return c, nil
}

func ptr[T any](v T) *T { return &v }
