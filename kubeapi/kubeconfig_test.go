package kubeapi

import (
	"errors"
	"strings"
	"testing"
)

// A kubeconfig as kubeadm writes it for a kubelet after TLS bootstrap,
// with the relative paths kubectl resolves against the file's directory.
const kubeletKubeconfig = `apiVersion: v1
kind: Config
preferences: {}
clusters:
- name: default-cluster
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority: pki/ca.crt
    tls-server-name: kubernetes
contexts:
- name: default-context
  context:
    cluster: default-cluster
    namespace: default
    user: default-auth
- name: other
  context:
    cluster: default-cluster
current-context: default-context
users:
- name: default-auth
  user:
    client-certificate: /var/lib/kubelet-node0/pki/kubelet-client-current.pem
    client-key: ../kubelet-node0/pki/kubelet-client-current.pem
`

func TestParseResolvesCurrentContextAndRelativePaths(t *testing.T) {
	tg, err := Parse([]byte(kubeletKubeconfig), "/etc/kubernetes/kubelet-node0.conf")
	if err != nil {
		t.Fatal(err)
	}
	cl, u := tg.Kubeconfig.Clusters[tg.Cluster], tg.Kubeconfig.AuthInfos[tg.User]
	for _, c := range []struct{ what, got, want string }{
		{"context", tg.Context, "default-context"},
		{"cluster", tg.Cluster, "default-cluster"},
		{"user", tg.User, "default-auth"},
		{"server", tg.Server.String(), "https://10.0.0.1:6443"},
		{"server name", cl.TLSServerName, "kubernetes"},
		{"CA path (relative to the kubeconfig)", cl.CertificateAuthority, "/etc/kubernetes/pki/ca.crt"},
		{"cert path (absolute)", u.ClientCertificate, "/var/lib/kubelet-node0/pki/kubelet-client-current.pem"},
		{"key path (relative, cleaned)", u.ClientKey, "/etc/kubelet-node0/pki/kubelet-client-current.pem"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
		}
	}
	if u.Token != "" || u.TokenFile != "" {
		t.Errorf("token set: %q %q", u.Token, u.TokenFile)
	}
	// Cut to the current context: the other context is not carried.
	if len(tg.Kubeconfig.Contexts) != 1 || len(tg.Kubeconfig.Clusters) != 1 || len(tg.Kubeconfig.AuthInfos) != 1 {
		t.Errorf("not cut to the current context: %+v", tg.Kubeconfig)
	}
}

func TestParseDataFieldsAndToken(t *testing.T) {
	kc := `clusters:
- name: c
  cluster: {server: "https://api.example:6443/prefix", certificate-authority-data: Q0EK}
users:
- name: u
  user: {client-certificate-data: Q0VSVAo=, client-key-data: S0VZCg==, token: " abc "}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`
	tg, err := Parse([]byte(kc), "kc")
	if err != nil {
		t.Fatal(err)
	}
	cl, u := tg.Kubeconfig.Clusters["c"], tg.Kubeconfig.AuthInfos["u"]
	if string(cl.CertificateAuthorityData) != "CA\n" || string(u.ClientCertificateData) != "CERT\n" || string(u.ClientKeyData) != "KEY\n" || u.Token != " abc " {
		t.Errorf("data: CA %q cert %q key %q token %q", cl.CertificateAuthorityData, u.ClientCertificateData, u.ClientKeyData, u.Token)
	}
	if u.ClientCertificate != "" {
		t.Errorf("cert path %q", u.ClientCertificate)
	}
	if tg.Server.Path != "/prefix" {
		t.Errorf("server path %q", tg.Server.Path)
	}
}

func TestParseAnonymousContext(t *testing.T) {
	kc := "clusters: [{name: c, cluster: {server: 'https://h'}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n"
	tg, err := Parse([]byte(kc), "kc")
	if err != nil {
		t.Fatal(err)
	}
	if tg.User != "" || len(tg.Kubeconfig.AuthInfos) != 0 || tg.Kubeconfig.Clusters["c"].CertificateAuthorityData != nil {
		t.Errorf("anonymous context: %+v", tg)
	}
}

// TestParseErrorsNameFileAndField: every refusal names the kubeconfig and
// the key.
func TestParseErrorsNameFileAndField(t *testing.T) {
	base := func(cluster, user string) string {
		return "clusters: [{name: c, cluster: {" + cluster + "}}]\n" +
			"users: [{name: u, user: {" + user + "}}]\n" +
			"contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	}
	const srv = "server: 'https://h:6443'"
	for _, c := range []struct {
		name, kc, field, msg string
	}{
		{"no current-context", "clusters: []\ncontexts: [{name: x, context: {cluster: c}}]\n", "current-context", "not set"},
		{"unknown current-context", "clusters: []\ncontexts: []\ncurrent-context: nope\n", "current-context", `context "nope" is not in contexts`},
		{"unknown cluster", "clusters: []\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n", `contexts["x"].context.cluster`, `cluster "c" is not in clusters`},
		{"unknown user", "clusters: [{name: c, cluster: {" + srv + "}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n", `contexts["x"].context.user`, `user "u" is not in users`},
		{"duplicate context", "contexts: [{name: x, context: {cluster: c}}, {name: x, context: {cluster: d}}]\ncurrent-context: x\n", "contexts", `"x" appears twice`},
		{"misspelt key", base(srv, "client-certficate: a.pem"), "", `not a kubeconfig: unknown field "client-certficate"`},
		{"not yaml", "{{{", "", "not a kubeconfig"},
		{"wrong kind", "kind: Pod\n", "kind", `"Pod", want Config`},
		{"no server", base("certificate-authority: ca.crt", ""), `clusters["c"].cluster.server`, "not set"},
		{"http server", base("server: 'http://h:8080'", ""), `clusters["c"].cluster.server`, "want https://"},
		{"CA twice", base(srv+", certificate-authority: ca.crt, certificate-authority-data: Q0EK", ""), `clusters["c"].cluster.certificate-authority`, "both certificate-authority and certificate-authority-data"},
		{"bad base64", base(srv+", certificate-authority-data: '!!'", ""), "", "a -data field is not base64"},
		{"exec without apiVersion", base(srv, "exec: {command: aws}"), `users["u"].user.exec`, "apiVersion: not set"},
		{"exec without command", base(srv, "exec: {apiVersion: client.authentication.k8s.io/v1}"), `users["u"].user.exec`, "command: not set"},
		{"exec misspelt key", base(srv, "exec: {apiVersion: client.authentication.k8s.io/v1, command: aws, argz: [x]}"), "", `not a kubeconfig: unknown field "argz"`},
		{"exec needing a terminal", base(srv, "exec: {apiVersion: client.authentication.k8s.io/v1, command: aws, interactiveMode: Always}"), `users["u"].user.exec`, "without a terminal"},
		{"exec beside a token", base(srv, "token: a, exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}"), `users["u"].user.exec`, "keep one"},
		{"auth provider misspelt key", base(srv, "auth-provider: {name: oidc, confg: {}}"), "", `not a kubeconfig: unknown field "confg"`},
		{"exec and auth provider", base(srv, "auth-provider: {name: oidc}, exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}"), `users["u"].user.auth-provider`, "keep one"},
		{"cert without key", base(srv, "client-certificate: c.pem"), `users["u"].user.client-key`, "not set, but client-certificate is"},
		{"key without cert", base(srv, "client-key-data: S0VZCg=="), `users["u"].user.client-certificate`, "not set, but client-key is"},
		{"token twice", base(srv, "token: a, tokenFile: t"), `users["u"].user.tokenFile`, "both token and tokenFile"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.kc), "/etc/kubernetes/test.conf")
			var ke *KubeconfigError
			if !errors.As(err, &ke) {
				t.Fatalf("error %v (%T), want a *KubeconfigError", err, err)
			}
			if ke.File != "/etc/kubernetes/test.conf" || ke.Field != c.field || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q (field %q), want field %q and %q", err, ke.Field, c.field, c.msg)
			}
			if !strings.HasPrefix(err.Error(), "kubeconfig /etc/kubernetes/test.conf: ") {
				t.Errorf("error %q does not start with the file", err)
			}
		})
	}
}
