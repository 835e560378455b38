package preflight

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// put writes rel below root, making its directories.
func put(t testing.TB, root, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// link makes rel below root a symbolic link to target.
func link(t testing.TB, root, rel, target string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// caPEM is a self-signed CA certificate, PEM.
func caPEM(t testing.TB) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// bootstrapKubeconfig is a bootstrap kubeconfig as the README writes it
// (a token, the CA by path).
const bootstrapKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: kubernetes
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority: /etc/kubernetes/pki/ca.crt
contexts:
- name: bootstrap
  context:
    cluster: kubernetes
    user: tls-bootstrap
current-context: bootstrap
users:
- name: tls-bootstrap
  user:
    token: abcdef.0123456789abcdef
`

// run is c's warnings and errors, as strings.
func run(c Check) (warnings, errs []string) {
	w, e := c.Check()
	for _, x := range w {
		warnings = append(warnings, x.Error())
	}
	for _, x := range e {
		errs = append(errs, x.Error())
	}
	return warnings, errs
}

// wantPass fails unless c has neither warnings nor errors.
func wantPass(t *testing.T, c Check) {
	t.Helper()
	if w, e := run(c); len(w)+len(e) > 0 {
		t.Errorf("%s %s: want a pass, got warnings %q, errors %q", c.Name(), c.Partition(), w, e)
	}
}

// wantError fails unless c has one error, containing every want.
func wantError(t *testing.T, c Check, want ...string) {
	t.Helper()
	w, e := run(c)
	if len(e) != 1 || len(w) != 0 {
		t.Errorf("%s %s: want one error, got warnings %q, errors %q", c.Name(), c.Partition(), w, e)
		return
	}
	contains(t, e[0], want...)
}

// wantWarning fails unless c has one warning and no error, containing
// every want.
func wantWarning(t *testing.T, c Check, want ...string) {
	t.Helper()
	w, e := run(c)
	if len(w) != 1 || len(e) != 0 {
		t.Errorf("%s %s: want one warning, got warnings %q, errors %q", c.Name(), c.Partition(), w, e)
		return
	}
	contains(t, w[0], want...)
}

func contains(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(got, s) {
			t.Errorf("%q does not say %q", got, s)
		}
	}
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }
