package validation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPathProblem(t *testing.T) {
	for p, want := range map[string]string{
		"/var/lib/kubelet-node0": "", "var/lib": "is not an absolute path", "/": "is the root directory",
		"/a//b": `is not a clean path (no '..', '.', '//' or trailing '/'): write "/a/b"`, "/a/./b": "is not a clean path",
		"/a\tb": "has characters", "/a$b": "has characters", "/a\\b": "has characters",
	} {
		if want == "" {
			assert.Empty(t, PathProblem(p), p)
		} else {
			assert.Contains(t, PathProblem(p), want, p)
		}
	}
	assert.Contains(t, ArgProblem(strings.Repeat("a", MaxArgLength+1)), "more than 4096")
	long := "/" + strings.Repeat("a", MaxPathLength-1)
	assert.Empty(t, PathProblem(long))
	assert.Contains(t, PathProblem(long+"a"), "more than 4032")
	// Render writes a path behind each of kubelet's flags that take one:
	// the path rule holds the argument to ArgProblem's.
	for _, s := range kubeletSettings {
		if s.flag != "" {
			assert.Empty(t, ArgProblem(s.flag+"="+long), s.flag)
		}
	}
	assert.Equal(t, "is empty", ArgProblem(""))
}

// Issue 27: the planner allowed "1a" and render refused it; one rule now
// serves both.
func TestNameProblem(t *testing.T) {
	for name, want := range map[string]string{
		"node0": "", "red": "", strings.Repeat("a", 32): "",
		"":                      "is empty",
		"1a":                    "starting with a letter",
		"node-0":                "contains '-' or '_'",
		"node_0":                "contains '-' or '_'",
		"Node0":                 "not a valid slice name part",
		strings.Repeat("a", 33): "not a valid slice name part",
		"system":                "taken by systemd or kubelet",
		"kubepods":              "taken by systemd or kubelet",
	} {
		if want == "" {
			assert.Empty(t, NameProblem(name), name)
		} else {
			assert.Contains(t, NameProblem(name), want, name)
		}
	}
}

// Issue 27: allocator.socket_group with a newline planned and rendered
// into a unit.
func TestSocketGroupProblem(t *testing.T) {
	for _, g := range []string{"", "numa", "_svc", "Domain.Users", "1000"} {
		assert.Empty(t, SocketGroupProblem(g), g)
	}
	for _, g := range []string{"numa\nExecStartPre=/bin/sh", "numa\n", "a b", "-x", strings.Repeat("a", 33), "12345678901"} {
		assert.NotEmpty(t, SocketGroupProblem(g), g)
	}
}

func TestExtraArgProblem(t *testing.T) {
	assert.Empty(t, ExtraArgProblem("--v=2"))
	assert.Contains(t, ExtraArgProblem("--root_dir=/x"), "sets --root-dir, which numa-partition sets for each partition (set kubelet.root_dir instead")
	assert.Contains(t, ExtraArgProblem("--config-dir=/x"), "set kubelet.drop_in instead")
	assert.Contains(t, ExtraArgProblem("--v"), "has no value")
	assert.Contains(t, ExtraArgProblem("v=2"), "is not a flag")
	assert.Contains(t, ManagedFlags(), "--reserved-cpus")
}

func TestLabelProblems(t *testing.T) {
	assert.Empty(t, LabelProblems("example.com/rack", "r1"))
	assert.Empty(t, LabelProblems("node.kubernetes.io/pool", "a"))
	assert.Empty(t, LabelProblems("topology.kubernetes.io/zone", "z"))
	assert.NotEmpty(t, LabelProblems("kubernetes.io/role", "master"), "a namespace kubelet may not set")
	assert.NotEmpty(t, LabelProblems("bad key", "v"))
	assert.NotEmpty(t, LabelProblems("k", "bad value!"))
}

// The texts of both link name rules, one function (linkNameProblem).
func TestLinkNameProblems(t *testing.T) {
	assert.Equal(t, "must be 1-15 characters (the kernel's IFNAMSIZ)", InterfaceNameProblem(strings.Repeat("a", 16)))
	assert.Equal(t, "is not an interface name", InterfaceNameProblem(".."))
	assert.Equal(t, "has characters an interface name cannot have ('/', ':', whitespace) or a unit cannot carry", InterfaceNameProblem("a:b"))
	assert.Equal(t, "must be 1-255 characters (a file name in /run/netns)", NamespaceNameProblem(""))
	assert.Equal(t, "is not a namespace name", NamespaceNameProblem("."))
	assert.Equal(t, "has characters a namespace name cannot have ('/', ':', whitespace) or a unit cannot carry", NamespaceNameProblem("a b"))
	assert.Empty(t, InterfaceNameProblem("eth0"))
	assert.Empty(t, NamespaceNameProblem("np-node0"))
}
