package kubevirt

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// seedVMI is the seed's example: 4Gi guest, 67 cores, 2Mi pages.
const seedVMI = `
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: big, namespace: vms, uid: vmi-1}
spec:
  domain:
    cpu: {cores: 67, dedicatedCpuPlacement: true}
    memory: {hugepages: {pageSize: 2Mi}}
    resources:
      requests: {memory: 4Gi}
      limits: {memory: 4Gi}
`

func TestSeedExampleV026(t *testing.T) {
	pod, err := LauncherPod([]byte(seedVMI), OverheadV026)
	if err != nil {
		t.Fatal(err)
	}
	req := pod.Spec.Containers[0].Resources.Requests
	mem := req[corev1.ResourceMemory]
	if mem.Value() != 723591169 {
		t.Errorf("memory = %d, want 723591169", mem.Value())
	}
	hp := req["hugepages-2Mi"]
	if hp.Value() != 4<<30 {
		t.Errorf("hugepages-2Mi = %s, want 4Gi", hp.String())
	}
	lim := pod.Spec.Containers[0].Resources.Limits
	if l := lim[corev1.ResourceMemory]; l.Cmp(mem) != 0 {
		t.Errorf("memory limit %s != request %s", l.String(), mem.String())
	}
	if c := req[corev1.ResourceCPU]; c.Value() != 67 {
		t.Errorf("cpu = %s, want 67 (dedicated)", c.String())
	}
	if pod.UID != "vmi-1" || pod.Name != "virt-launcher-big" || pod.Namespace != "vms" {
		t.Errorf("pod meta %s/%s %s", pod.Namespace, pod.Name, pod.UID)
	}
}

func TestOverheadFormulas(t *testing.T) {
	const pagetables = 8388609 // ScaledValue(4Gi, k)=4294968 → ×1000/512
	const mi = 1 << 20
	cases := []struct {
		name, manifest, formula string
		want                    int64
	}{
		{"v0.26 seed", seedVMI, OverheadV026, pagetables + 128e6 + 67*8*mi + 8*mi + 16*mi},
		{"current seed (dedicated)", seedVMI, OverheadCurrent, pagetables + 220*mi + 67*8*mi + 8*mi + 32*mi + 100*mi},
		{"current, no video, vfio, sockets×threads", `
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: gpu, uid: u}
spec:
  domain:
    cpu: {cores: 2, sockets: 2, threads: 2}
    memory: {guest: 4Gi}
    devices: {autoattachGraphicsDevice: false, gpus: [{name: g, deviceName: nvidia.com/A100}]}
`, OverheadCurrent, pagetables + 220*mi + 8*8*mi + 8*mi + 1024*mi},
		{"v0.26 counts cores only", `
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: small, uid: u}
spec: {domain: {cpu: {cores: 2, sockets: 2}, resources: {requests: {memory: 4Gi}}}}
`, OverheadV026, pagetables + 128e6 + 2*8*mi + 8*mi + 16*mi},
		{"current, Guaranteed QoS, vCPUs from the CPU limit, TPM, SEV, two probes", `
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: secure, uid: u}
spec:
  livenessProbe: {tcpSocket: {port: 22}}
  readinessProbe: {tcpSocket: {port: 22}}
  domain:
    resources:
      requests: {memory: 4Gi, cpu: 2500m}
      limits: {memory: 4Gi, cpu: 2500m}
    devices: {tpm: {}}
    launchSecurity: {sev: {}}
`, OverheadCurrent, pagetables + 220*mi + 3*8*mi + 8*mi + 32*mi + 100*mi + 53*mi + 256*mi + 120*mi},
		{"current, Burstable: no QoS term, one vCPU from the request", `
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: burst, uid: u}
spec: {domain: {resources: {requests: {memory: 4Gi, cpu: 500m}, limits: {memory: 8Gi}}}}
`, OverheadCurrent, pagetables + 220*mi + 1*8*mi + 8*mi + 32*mi},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := Parse([]byte(c.manifest))
			if err != nil {
				t.Fatal(err)
			}
			q, err := Overhead(v, c.formula)
			if err != nil {
				t.Fatal(err)
			}
			if q.Value() != c.want {
				t.Fatalf("overhead %d, want %d", q.Value(), c.want)
			}
		})
	}
}

func TestNoHugepagesAddsGuest(t *testing.T) {
	pod, err := LauncherPod([]byte(`
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: plain, uid: u}
spec: {domain: {resources: {requests: {memory: 1Gi}}, devices: {autoattachGraphicsDevice: false}}}
`), OverheadV026)
	if err != nil {
		t.Fatal(err)
	}
	mem := pod.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory]
	// 1Gi/1000 rounds up to 1073742k; ×1000/512 = 2097152 (exact: 2097152.34 truncated)
	// no cpu block: v0.26 counts 8Mi once; plus the 8Mi IOThread; no video.
	if want := int64(1<<30 + 2097152 + 128e6 + 8<<20 + 8<<20); mem.Value() != want {
		t.Fatalf("memory %d, want %d", mem.Value(), want)
	}
	if len(pod.Spec.Containers[0].Resources.Limits) != 0 {
		t.Fatalf("no memory limit and no dedicated CPUs must give no limits (Burstable), got %v", pod.Spec.Containers[0].Resources.Limits)
	}
}

func TestBadManifests(t *testing.T) {
	for name, m := range map[string]string{
		"kind":     "apiVersion: kubevirt.io/v1\nkind: Pod\nmetadata: {name: x, uid: u}\n",
		"api":      "apiVersion: v1\nkind: VirtualMachineInstance\nmetadata: {name: x, uid: u}\n",
		"memory":   "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: x, uid: u}\nspec: {domain: {}}\n",
		"uid":      "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: x}\nspec: {domain: {memory: {guest: 1Gi}}}\n",
		"pagesize": "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: x, uid: u}\nspec: {domain: {memory: {guest: 1Gi, hugepages: {pageSize: huge}}}}\n",
		"yaml":     "{{",
	} {
		if _, err := LauncherPod([]byte(m), OverheadCurrent); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	v, _ := Parse([]byte(seedVMI))
	if _, err := Overhead(v, "v9"); err == nil {
		t.Error("unknown formula accepted")
	}
}

func FuzzLauncherPod(f *testing.F) {
	f.Add([]byte(seedVMI))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = LauncherPod(b, OverheadCurrent)
	})
}
