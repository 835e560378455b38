package k8s

// The add-on manifests, rendered by ../render.sh, checked as the API server
// would take them (strict decoding, then Kubernetes 1.37.2's own defaulting
// and validation of each object) and for what the e2e relies on: local
// images never pulled, node agents on every Node, the placeholders' values
// where they belong, kube-proxy's configuration accepted by kube-proxy's own
// decoder and validation.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/apps"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	"k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/rbac"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	rbacvalidation "k8s.io/kubernetes/pkg/apis/rbac/validation"
	"k8s.io/kubernetes/pkg/capabilities"
	proxyconfig "k8s.io/kubernetes/pkg/proxy/apis/config"
	proxyscheme "k8s.io/kubernetes/pkg/proxy/apis/config/scheme"
	proxyvalidation "k8s.io/kubernetes/pkg/proxy/apis/config/validation"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"

	"k8s.io/kube-aggregator/pkg/apis/apiregistration"
	apiregistrationinstall "k8s.io/kube-aggregator/pkg/apis/apiregistration/install"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationvalidation "k8s.io/kube-aggregator/pkg/apis/apiregistration/validation"
)

// metrics-server's APIService is the aggregator's type, in neither
// client-go's scheme nor Kubernetes' legacy one.
func init() {
	apiregistrationinstall.Install(legacyscheme.Scheme)
	if err := apiregistrationv1.AddToScheme(scheme.Scheme); err != nil {
		panic(err)
	}
}

// required are the values every rendering needs (the e2e's own).
var required = []string{"APISERVER=https://10.0.2.100:6443", "CLUSTER_CIDR=10.244.0.0/16", "DNS_IP=10.96.0.10"}

func render(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"../render.sh"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("render.sh %v: %v: %s", args, err, stderr.String())
	}
	return out
}

// decode splits a YAML stream and decodes each document strictly: an
// unknown or duplicate field is an error, as for kubectl --validate=strict.
func decode(t *testing.T, stream []byte) []runtime.Object {
	t.Helper()
	d := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	var objs []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := d.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("decode:\n%s\n: %v", doc, err)
		}
		objs = append(objs, obj)
	}
	return objs
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, l := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.Bytes()
}

func name(obj runtime.Object) string {
	m := obj.(interface {
		GetNamespace() string
		GetName() string
	})
	kind := fmt.Sprintf("%T", obj)
	kind = kind[strings.LastIndex(kind, ".")+1:]
	if m.GetNamespace() == "" {
		return kind + " " + m.GetName()
	}
	return kind + " " + m.GetNamespace() + "/" + m.GetName()
}

// validate defaults obj as the API server does, converts it to the
// internal type and runs Kubernetes' validation for a create.
func validate(t *testing.T, obj runtime.Object) field.ErrorList {
	t.Helper()
	obj = obj.DeepCopyObject()
	legacyscheme.Scheme.Default(obj)
	var internal runtime.Object
	switch obj.(type) {
	case *appsv1.DaemonSet:
		internal = &apps.DaemonSet{}
	case *appsv1.Deployment:
		internal = &apps.Deployment{}
	case *corev1.Service:
		internal = &core.Service{}
	case *corev1.ConfigMap:
		internal = &core.ConfigMap{}
	case *corev1.ServiceAccount:
		internal = &core.ServiceAccount{}
	case *corev1.Namespace:
		internal = &core.Namespace{}
	case *rbacv1.ClusterRole:
		internal = &rbac.ClusterRole{}
	case *rbacv1.ClusterRoleBinding:
		internal = &rbac.ClusterRoleBinding{}
	case *rbacv1.RoleBinding:
		internal = &rbac.RoleBinding{}
	case *apiregistrationv1.APIService:
		internal = &apiregistration.APIService{}
	default:
		t.Fatalf("%s: no validation for %T", name(obj), obj)
	}
	if err := legacyscheme.Scheme.Convert(obj, internal, nil); err != nil {
		t.Fatalf("%s: convert: %v", name(obj), err)
	}
	opts := corevalidation.PodValidationOptions{}
	// What the API server does before validating, that defaulting does not:
	// it runs with --allow-privileged=true (kubeadm's, and the e2e's), and
	// the Service registry fills spec.clusterIPs from spec.clusterIP.
	capabilities.Initialize(capabilities.Capabilities{AllowPrivileged: true})
	if s, ok := internal.(*core.Service); ok && len(s.Spec.ClusterIPs) == 0 && s.Spec.ClusterIP != "" {
		s.Spec.ClusterIPs = []string{s.Spec.ClusterIP}
	}
	switch o := internal.(type) {
	case *apps.DaemonSet:
		return appsvalidation.ValidateDaemonSet(o, opts)
	case *apps.Deployment:
		return appsvalidation.ValidateDeployment(o, opts)
	case *core.Service:
		return corevalidation.ValidateServiceCreate(o)
	case *core.ConfigMap:
		return corevalidation.ValidateConfigMap(o)
	case *core.ServiceAccount:
		return corevalidation.ValidateServiceAccount(o)
	case *core.Namespace:
		return corevalidation.ValidateNamespace(o)
	case *rbac.ClusterRole:
		return rbacvalidation.ValidateClusterRole(o, rbacvalidation.ClusterRoleValidationOptions{})
	case *rbac.ClusterRoleBinding:
		return rbacvalidation.ValidateClusterRoleBinding(o)
	case *rbac.RoleBinding:
		return rbacvalidation.ValidateRoleBinding(o)
	case *apiregistration.APIService:
		return apiregistrationvalidation.ValidateAPIService(context.Background(), o)
	}
	panic("unreachable")
}

func byName(t *testing.T, objs []runtime.Object) map[string]runtime.Object {
	m := map[string]runtime.Object{}
	for _, o := range objs {
		if _, dup := m[name(o)]; dup {
			t.Errorf("%s is in the manifests twice", name(o))
		}
		m[name(o)] = o
	}
	return m
}

func TestManifestsAreValidObjects(t *testing.T) {
	objs := byName(t, decode(t, render(t, required...)))
	var names []string
	for n, o := range objs {
		names = append(names, n)
		if errs := validate(t, o); len(errs) > 0 {
			t.Errorf("%s is invalid: %v", n, errs.ToAggregate())
		}
	}
	slices.Sort(names)
	want := []string{
		"APIService v1beta1.metrics.k8s.io",
		"ClusterRole flannel",
		"ClusterRole system:aggregated-metrics-reader",
		"ClusterRole system:coredns",
		"ClusterRole system:metrics-server",
		"ClusterRoleBinding flannel",
		"ClusterRoleBinding kubeadm:node-proxier",
		"ClusterRoleBinding metrics-server:system:auth-delegator",
		"ClusterRoleBinding system:coredns",
		"ClusterRoleBinding system:metrics-server",
		"ConfigMap kube-flannel/kube-flannel-cfg",
		"ConfigMap kube-system/coredns",
		"ConfigMap kube-system/kube-proxy",
		"DaemonSet kube-flannel/kube-flannel-ds",
		"DaemonSet kube-system/kube-proxy",
		"DaemonSet kube-system/node-exporter",
		"DaemonSet kube-system/np-deviceplugin",
		"Deployment kube-system/coredns",
		"Deployment kube-system/metrics-server",
		"Namespace kube-flannel",
		"RoleBinding kube-system/metrics-server-auth-reader",
		"Service kube-system/kube-dns",
		"Service kube-system/metrics-server",
		"ServiceAccount kube-flannel/flannel",
		"ServiceAccount kube-system/coredns",
		"ServiceAccount kube-system/kube-proxy",
		"ServiceAccount kube-system/metrics-server",
		"ServiceAccount kube-system/node-exporter",
		"ServiceAccount kube-system/np-deviceplugin",
	}
	if !slices.Equal(names, want) {
		t.Errorf("objects:\n  %s\nwant:\n  %s", strings.Join(names, "\n  "), strings.Join(want, "\n  "))
	}

	// The namespaces the objects go in exist in a kubeadm cluster or here.
	for n, o := range objs {
		ns := o.(interface{ GetNamespace() string }).GetNamespace()
		if ns != "" && ns != "kube-system" && objs["Namespace "+ns] == nil {
			t.Errorf("%s: namespace %s is neither kube-system nor in the manifests", n, ns)
		}
	}
	// Role and ClusterRole bindings name ServiceAccounts of the manifests
	// and roles that are there or are the API server's bootstrap roles.
	bootstrap := map[string]bool{}
	for _, r := range bootstrappolicy.ClusterRoles() {
		bootstrap["ClusterRole "+r.Name] = true
	}
	for ns, roles := range bootstrappolicy.NamespaceRoles() {
		for _, r := range roles {
			bootstrap["Role "+ns+"/"+r.Name] = true
		}
	}
	for n, o := range objs {
		var role string
		var subjects []rbacv1.Subject
		switch b := o.(type) {
		case *rbacv1.ClusterRoleBinding:
			role, subjects = "ClusterRole "+b.RoleRef.Name, b.Subjects
		case *rbacv1.RoleBinding:
			role, subjects = b.RoleRef.Kind+" "+b.RoleRef.Name, b.Subjects
			if b.RoleRef.Kind == "Role" {
				role = "Role " + b.Namespace + "/" + b.RoleRef.Name
			}
		default:
			continue
		}
		if objs[role] == nil && !bootstrap[role] {
			t.Errorf("%s binds %s, which is neither here nor a bootstrap role", n, role)
		}
		for _, s := range subjects {
			if objs["ServiceAccount "+s.Namespace+"/"+s.Name] == nil {
				t.Errorf("%s: subject ServiceAccount %s/%s is not in the manifests", n, s.Namespace, s.Name)
			}
		}
	}
}

// podSpec returns the pod template of a DaemonSet or Deployment.
func podSpec(o runtime.Object) (*corev1.PodSpec, bool) {
	switch w := o.(type) {
	case *appsv1.DaemonSet:
		return &w.Spec.Template.Spec, true
	case *appsv1.Deployment:
		return &w.Spec.Template.Spec, true
	}
	return nil, false
}

func TestWorkloadsRunLocalImagesOnEveryNode(t *testing.T) {
	objs := byName(t, decode(t, render(t, required...)))
	images := map[string]string{}
	for n, o := range objs {
		spec, ok := podSpec(o)
		if !ok {
			continue
		}
		for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
			if c.ImagePullPolicy != corev1.PullNever {
				t.Errorf("%s container %s: imagePullPolicy %q, want Never (the VM has no registry)", n, c.Name, c.ImagePullPolicy)
			}
			if !strings.HasPrefix(c.Image, "e2e.local/") {
				t.Errorf("%s container %s: image %s is not one of test/addons/build.sh's", n, c.Name, c.Image)
			}
			images[c.Image] = n
		}
		if spec.ServiceAccountName == "" || objs["ServiceAccount "+o.(interface{ GetNamespace() string }).GetNamespace()+"/"+spec.ServiceAccountName] == nil {
			t.Errorf("%s: service account %q is not in the manifests", n, spec.ServiceAccountName)
		}
		if _, ds := o.(*appsv1.DaemonSet); ds {
			// A node agent runs on every Node, whatever its taints, as
			// kubeadm's kube-proxy does.
			if !slices.ContainsFunc(spec.Tolerations, func(tl corev1.Toleration) bool {
				return tl.Operator == corev1.TolerationOpExists && tl.Key == "" && tl.Effect == ""
			}) {
				t.Errorf("%s does not tolerate every taint: %v", n, spec.Tolerations)
			}
			if spec.PriorityClassName != "system-node-critical" {
				t.Errorf("%s: priorityClassName %q, want system-node-critical", n, spec.PriorityClassName)
			}
		}
	}
	var got []string
	for i := range images {
		got = append(got, i)
	}
	slices.Sort(got)
	want := []string{"e2e.local/coredns:v1.15.0", "e2e.local/flannel:v0.28.10", "e2e.local/kube-proxy:v1.37.2", "e2e.local/metrics-server:v0.8.0", "e2e.local/node-exporter:v1.12.1", "e2e.local/np-deviceplugin:1"}
	if !slices.Equal(got, want) {
		t.Errorf("images %v, want %v (test/addons/build.sh's names)", got, want)
	}

	host := func(n string) *corev1.PodSpec {
		s, _ := podSpec(objs[n])
		if s == nil {
			t.Fatalf("%s missing", n)
		}
		return s
	}
	kp := host("DaemonSet kube-system/kube-proxy")
	if !kp.HostNetwork || kp.Containers[0].SecurityContext == nil || !*kp.Containers[0].SecurityContext.Privileged {
		t.Error("kube-proxy must run privileged in the host's network")
	}
	ne := host("DaemonSet kube-system/node-exporter")
	if !ne.HostNetwork || !ne.HostPID || ne.Containers[0].Ports[0].ContainerPort != 9100 {
		t.Error("node-exporter must run in the host's network and PID namespace on :9100")
	}
	if !host("DaemonSet kube-flannel/kube-flannel-ds").HostNetwork {
		t.Error("flanneld must run in the host's network")
	}
}

// hostPaths returns a pod spec's hostPath volumes by name.
func hostPaths(spec *corev1.PodSpec) map[string]string {
	m := map[string]string{}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			m[v.Name] = v.HostPath.Path
		}
	}
	return m
}

func TestPlaceholdersLandWhereTheyBelong(t *testing.T) {
	objs := byName(t, decode(t, render(t, append(required,
		"CNI_BIN_DIR=/usr/lib/cni", "CNI_CONF_DIR=/etc/cni/net.d-node0", "PROXY_MODE=iptables",
		"FLANNEL_NFTABLES=true", "CLUSTER_DOMAIN=e2e.local", "DNS_UPSTREAM=10.0.2.3", "DNS_REPLICAS=1",
		"DEVICE_PLUGINS_DIR=/var/lib/kubelet-node0/device-plugins", "KUBELET_DIR=/var/lib/kubelet-node0")...)))

	fl, _ := podSpec(objs["DaemonSet kube-flannel/kube-flannel-ds"])
	if hp := hostPaths(fl); hp["cni-plugin"] != "/usr/lib/cni" || hp["cni"] != "/etc/cni/net.d-node0" {
		t.Errorf("flannel host paths %v, want cni-plugin /usr/lib/cni, cni /etc/cni/net.d-node0", hp)
	}
	cm := objs["ConfigMap kube-flannel/kube-flannel-cfg"].(*corev1.ConfigMap)
	var net struct {
		Network        string
		EnableNFTables bool
		Backend        struct{ Type string }
	}
	if err := json.Unmarshal([]byte(cm.Data["net-conf.json"]), &net); err != nil {
		t.Fatalf("net-conf.json: %v", err)
	}
	if net.Network != "10.244.0.0/16" || !net.EnableNFTables || net.Backend.Type != "vxlan" {
		t.Errorf("net-conf.json = %+v, want 10.244.0.0/16, nftables, vxlan", net)
	}
	var cni struct {
		CNIVersion string `json:"cniVersion"`
		Plugins    []struct{ Type string }
	}
	if err := json.Unmarshal([]byte(cm.Data["cni-conf.json"]), &cni); err != nil {
		t.Fatalf("cni-conf.json: %v", err)
	}
	if cni.CNIVersion != "0.4.0" || len(cni.Plugins) != 2 || cni.Plugins[0].Type != "flannel" || cni.Plugins[1].Type != "portmap" {
		t.Errorf("cni-conf.json = %+v, want 0.4.0 (the v0.9.1 flannel plugin's highest), flannel then portmap", cni)
	}

	core := objs["ConfigMap kube-system/coredns"].(*corev1.ConfigMap).Data["Corefile"]
	for _, s := range []string{"kubernetes e2e.local in-addr.arpa ip6.arpa {", "forward . 10.0.2.3 {", "disable success e2e.local"} {
		if !strings.Contains(core, s) {
			t.Errorf("Corefile lacks %q:\n%s", s, core)
		}
	}
	if svc := objs["Service kube-system/kube-dns"].(*corev1.Service); svc.Spec.ClusterIP != "10.96.0.10" {
		t.Errorf("kube-dns clusterIP %s, want 10.96.0.10", svc.Spec.ClusterIP)
	}
	if d := objs["Deployment kube-system/coredns"].(*appsv1.Deployment); *d.Spec.Replicas != 1 {
		t.Errorf("coredns replicas %d, want 1", *d.Spec.Replicas)
	}

	dp, _ := podSpec(objs["DaemonSet kube-system/np-deviceplugin"])
	hp := hostPaths(dp)
	if hp["device-plugins"] != "/var/lib/kubelet-node0/device-plugins" || hp["plugins-registry"] != "/var/lib/kubelet-node0/plugins_registry" ||
		hp["plugin-dir"] != "/var/lib/kubelet-node0/plugins/e2e.numa-partition.io" {
		t.Errorf("np-deviceplugin host paths %v", hp)
	}
	if a := strings.Join(dp.Containers[0].Args, " "); !strings.Contains(a, "--csi-endpoint=/var/lib/kubelet-node0/plugins/e2e.numa-partition.io/csi.sock") {
		t.Errorf("np-deviceplugin args %s: the CSI endpoint must be the path kubelet sees", a)
	}
	// The CSI socket is mounted at the path it is announced under.
	for _, m := range dp.Containers[0].VolumeMounts {
		if m.Name != "device-plugins" && m.MountPath != hp[m.Name] {
			t.Errorf("np-deviceplugin mounts %s at %s, host path %s: kubelet dials the path the plugin announces", m.Name, m.MountPath, hp[m.Name])
		}
	}

	kp := objs["ConfigMap kube-system/kube-proxy"].(*corev1.ConfigMap)
	cfg := kubeProxyConfig(t, kp.Data["config.conf"])
	if cfg.Mode != proxyconfig.ProxyModeIPTables {
		t.Errorf("kube-proxy mode %q, want iptables", cfg.Mode)
	}
}

// kubeProxyConfig decodes config.conf as kube-proxy does (strictly, through
// its own scheme, with its defaults) and validates it with kube-proxy's
// validation.
func kubeProxyConfig(t *testing.T, data string) *proxyconfig.KubeProxyConfiguration {
	t.Helper()
	obj, _, err := proxyscheme.Codecs.UniversalDecoder().Decode([]byte(data), nil, nil)
	if err != nil {
		t.Fatalf("config.conf: %v", err)
	}
	cfg, ok := obj.(*proxyconfig.KubeProxyConfiguration)
	if !ok {
		t.Fatalf("config.conf decodes to %T", obj)
	}
	cfg.HostnameOverride = "e2e-v2-node0" // what --hostname-override=$(NODE_NAME) sets
	if errs := proxyvalidation.Validate(cfg); len(errs) > 0 {
		t.Errorf("config.conf is invalid: %v", errs.ToAggregate())
	}
	return cfg
}

func TestKubeProxyConfig(t *testing.T) {
	objs := byName(t, decode(t, render(t, required...)))
	cm := objs["ConfigMap kube-system/kube-proxy"].(*corev1.ConfigMap)
	cfg := kubeProxyConfig(t, cm.Data["config.conf"])
	if cfg.Mode != proxyconfig.ProxyModeNFTables {
		t.Errorf("mode %q, want nftables (the default)", cfg.Mode)
	}
	if len(cfg.DetectLocal.ClusterCIDRs) != 1 || cfg.DetectLocal.ClusterCIDRs[0] != "10.244.0.0/16" {
		t.Errorf("clusterCIDR %v, want [10.244.0.0/16]", cfg.DetectLocal.ClusterCIDRs)
	}
	if cfg.ClientConnection.Kubeconfig != "/var/lib/kube-proxy/kubeconfig.conf" {
		t.Errorf("kubeconfig %q: the DaemonSet mounts the ConfigMap at /var/lib/kube-proxy", cfg.ClientConnection.Kubeconfig)
	}
	if cfg.Linux.Conntrack.MaxPerCore == nil || *cfg.Linux.Conntrack.MaxPerCore != 0 {
		t.Errorf("conntrack.maxPerCore %v, want 0", cfg.Linux.Conntrack.MaxPerCore)
	}

	kc, err := clientcmd.Load([]byte(cm.Data["kubeconfig.conf"]))
	if err != nil {
		t.Fatalf("kubeconfig.conf: %v", err)
	}
	ctx := kc.Contexts[kc.CurrentContext]
	if ctx == nil || kc.Clusters[ctx.Cluster] == nil || kc.AuthInfos[ctx.AuthInfo] == nil {
		t.Fatalf("kubeconfig.conf: current context %q is incomplete", kc.CurrentContext)
	}
	if s := kc.Clusters[ctx.Cluster].Server; s != "https://10.0.2.100:6443" {
		t.Errorf("kubeconfig server %q, want the APISERVER value", s)
	}
	if ca := kc.Clusters[ctx.Cluster].CertificateAuthority; ca != "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt" {
		t.Errorf("kubeconfig CA %q, want the service account's", ca)
	}
	if tf := kc.AuthInfos[ctx.AuthInfo].TokenFile; tf != "/var/run/secrets/kubernetes.io/serviceaccount/token" {
		t.Errorf("kubeconfig token file %q, want the service account's", tf)
	}
}

func TestRenderRefusesWhatItCannotFill(t *testing.T) {
	for _, args := range [][]string{
		{"CLUSTER_CIDR=10.244.0.0/16", "DNS_IP=10.96.0.10"},       // APISERVER missing
		append(slices.Clone(required), "PROXY_MODE=ipvs"),         // not a mode this image serves
		append(slices.Clone(required), "CNI_BINDIR=/usr/lib/cni"), // misspelt key
		append(slices.Clone(required), `DNS_IP=10.96.0.10"`),      // would break the YAML
	} {
		cmd := exec.Command("bash", append([]string{"../render.sh"}, args...)...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("render.sh %v: %v, want exit 2\n%s", args, err, out)
		}
	}
}
