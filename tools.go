//go:build tools

// Package tools pins the project's library modules in go.mod while the
// packages that use them are being written in parallel; see DEVELOPERS.md.
package tools

import (
	_ "github.com/BurntSushi/toml"
	_ "github.com/coreos/go-systemd/v22/daemon"
	_ "github.com/coreos/go-systemd/v22/dbus"
	_ "github.com/godbus/dbus/v5"
	_ "github.com/pmezard/go-difflib/difflib"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/procfs"
	_ "github.com/prometheus/procfs/sysfs"
	_ "github.com/stretchr/testify/assert"
	_ "github.com/urfave/cli/v2"
	_ "golang.org/x/sys/unix"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/apimachinery/pkg/api/resource"
	_ "k8s.io/kubelet/config/v1beta1"
	_ "pgregory.net/rapid"
	_ "sigs.k8s.io/yaml"
)
