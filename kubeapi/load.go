package kubeapi

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// Config is a kubeconfig made usable: the server and the TLS settings and
// token to reach it with.
type Config struct {
	File    string // the kubeconfig
	Context string
	User    string // the kubeconfig's user entry, "" for anonymous
	Server  *url.URL
	tls     *tls.Config
	token   string
	caSum   string // the CA bundle's sha256, "" for the system's roots
	caPEM   []byte // the CA bundle, for an exec plugin that asks for the cluster
	// exec and authProvider are the user's credential plugin (exec.go,
	// authprovider.go), credField its key.
	exec         *clientcmdapi.ExecConfig
	authProvider *clientcmdapi.AuthProviderConfig
	credField    string
}

// Endpoint names the server c dials and how it trusts it: the URL, the
// TLS server name and the CA bundle's digest. Two kubeconfigs with the
// same endpoint reach the same server the same way, whoever they log in
// as: asking it once answers for both.
func (c *Config) Endpoint() string {
	return c.Server.String() + " " + c.tls.ServerName + " " + c.caSum
}

// Load reads the kubeconfig at path and the files it names. root is the
// filesystem they are on: "/" (or "") for this machine, or another
// host's root (status --root), below which path and every absolute path
// in the kubeconfig are read, as that host's kubelet sees them.
//
// Errors are *KubeconfigError naming the file and the field; a missing
// kubeconfig is one with Field "" that errors.Is(err, fs.ErrNotExist).
func Load(root, path string) (*Config, error) {
	read := func(p string) ([]byte, error) {
		if root == "" || filepath.Clean(root) == "/" {
			return fsutil.ReadFileBounded(p, maxKubeconfigFile)
		}
		// Another host's root: its links (kubelet-client-current.pem is
		// one) are followed inside it, never onto this host.
		return fsutil.NewRoot(root).ReadFileFollow(p, maxKubeconfigFile)
	}
	b, err := read(path)
	if err != nil {
		return nil, &KubeconfigError{File: path, Err: err}
	}
	t, err := Parse(b, path)
	if err != nil {
		return nil, err
	}
	if t.CredField != "" && root != "" && filepath.Clean(root) != "/" {
		// An exec plugin is a command of this host, an auth provider
		// reads files and reaches an issuer as this host.
		return nil, &KubeconfigError{File: path, Field: t.CredField, Err: fmt.Errorf("runs as this host, not as the root %s: give a kubeconfig with a certificate or a token", root)}
	}
	return t.Config(read)
}

// Config reads what t's sources name through read and builds the TLS
// settings: the CA pool, the client key pair (certificate and key may be
// one PEM file, as kubelet's kubelet-client-current.pem is) and the token.
func (t *Target) Config(read func(path string) ([]byte, error)) (*Config, error) {
	fail := func(s Source, err error) error { return &KubeconfigError{File: t.File, Field: s.Field, Err: err} }
	load := func(s Source) ([]byte, error) {
		if s.Path == "" {
			return s.Data, nil
		}
		b, err := read(s.Path)
		if err != nil {
			return nil, fail(s, err)
		}
		return b, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	caSum := ""
	var caPEM []byte
	if t.CA.Set() {
		pem, err := load(t.CA)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fail(t.CA, errors.New("no PEM certificate in it"))
		}
		tc.RootCAs = pool
		caSum = fmt.Sprintf("%x", sha256.Sum256(pem))
		caPEM = pem
	}
	if t.Cert.Set() {
		certPEM, err := load(t.Cert)
		if err != nil {
			return nil, err
		}
		keyPEM, err := load(t.Key)
		if err != nil {
			return nil, err
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fail(t.Cert, fmt.Errorf("with %s: %w", lastKey(t.Key.Field), err))
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	c := &Config{File: t.File, Context: t.Context, User: t.User, Server: t.Server, tls: tc, caSum: caSum, caPEM: caPEM,
		exec: t.Exec, authProvider: t.AuthProvider, credField: t.CredField}
	if t.Token.Set() {
		b, err := load(t.Token)
		if err != nil {
			return nil, err
		}
		c.token = string(bytes.TrimSpace(b))
		if c.token == "" {
			return nil, fail(t.Token, errors.New("empty token"))
		}
	}
	return c, nil
}

// maxKubeconfigFile bounds a kubeconfig and each file it names (CA,
// client certificate and key, token): a few KiB each; a kubeconfig
// embedding a long CA bundle stays far below it.
const maxKubeconfigFile = 4 << 20
