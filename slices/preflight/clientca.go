package preflight

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// maxCAFile bounds a CA bundle: far more certificates than any cluster has.
const maxCAFile = 4 << 20

// ClientCACheck is the CA file the partition's rendered
// KubeletConfiguration names (authentication.x509.clientCAFile): kubelet
// refuses to start without it, or when it holds no certificate.
type ClientCACheck struct {
	Root       fsutil.Root
	Part       string
	Path       string // absolute, as the KubeletConfiguration names it
	ConfigPath string // the KubeletConfiguration, for the message
}

// Name is ClientCA.
func (ClientCACheck) Name() string { return NameClientCA }

// Partition is the partition whose kubelet reads the CA.
func (c ClientCACheck) Partition() string { return c.Part }

// Check reads the CA file and parses its certificates.
func (c ClientCACheck) Check() (warnings, errs []error) {
	return nil, errorsOf(c.problem())
}

func (c ClientCACheck) problem() error {
	if c.Path == "" {
		return nil // a kubelet without client certificate authentication
	}
	fix := "copy the cluster's CA there (kubeadm's /etc/kubernetes/pki/ca.crt of a control-plane node)"
	where := c.Root.Path(relative(c.Path))
	b, err := c.Root.ReadFileFollow(relative(c.Path), maxCAFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("partition %s: the cluster CA %s that its kubelet's %s names (authentication.x509.clientCAFile) does not exist: %s", c.Part, where, c.ConfigPath, fix)
	case err != nil:
		return fmt.Errorf("partition %s: the cluster CA its kubelet's %s names: %w; %s", c.Part, c.ConfigPath, err, fix)
	}
	if err := parseCertificates(b); err != nil {
		return fmt.Errorf("partition %s: the cluster CA %s: %w; %s", c.Part, where, err, fix)
	}
	return nil
}

// parseCertificates checks that b is PEM with at least one certificate,
// each of which parses.
func parseCertificates(b []byte) error {
	n := 0
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
			return fmt.Errorf("certificate %d: %w", n+1, err)
		}
		n++
	}
	if n == 0 {
		return errors.New("holds no PEM certificate")
	}
	return nil
}
