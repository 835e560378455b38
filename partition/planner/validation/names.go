package validation

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/numa-partition/numa-partition/internal/echo"
)

// nameRe is the partition name rule: a systemd slice name part that
// kubelet's systemd cgroup driver does not split ('-' means nesting to
// systemd and kubelet maps '_' to '-'), which is also a DNS label so it can
// go into node names and paths, starting with a letter so that it never
// reads as a partition index ({index}, "0").
var nameRe = regexp.MustCompile(`^[a-z][a-z0-9]{0,31}$`)

// NameProblem says what is wrong with a partition name, or "". Plan
// checks names with it, and planner.CheckPlanFile the names of a plan
// read from a file.
func NameProblem(name string) string {
	switch {
	case name == "":
		return "partition name is empty"
	case strings.ContainsAny(name, "-_"):
		return fmt.Sprintf("partition name %q contains '-' or '_': systemd reads '-' as slice nesting and kubelet's systemd cgroup driver splits on it (allowed: 1-32 of a-z, 0-9, starting with a letter)", echo.Value(name))
	case !nameRe.MatchString(name):
		return fmt.Sprintf("partition name %q is not a valid slice name part (allowed: 1-32 of a-z, 0-9, starting with a letter)", echo.Value(name))
	case reservedSliceNames[name]:
		return fmt.Sprintf("partition name %q is taken by systemd or kubelet (%s.slice); choose another", echo.Value(name), echo.Value(name))
	}
	return ""
}

// reservedSliceNames are slices systemd or kubelet already use.
var reservedSliceNames = map[string]bool{
	"system": true, "user": true, "machine": true, "init": true, "kubepods": true,
}

// NamespaceNameProblem says what is wrong with a network namespace name
// of the plan, "" when nothing. A named namespace is a file in /run/netns
// (a component, up to 255 bytes: no interface name, so IFNAMSIZ does not
// bound it; the host link, which is one, is HostLinkOf's digest when
// "np-" + name is too long) named on unit lines, so without the
// characters InterfaceNameProblem refuses. NamespaceOf a valid partition
// name is always one.
func NamespaceNameProblem(n string) string {
	return linkNameProblem(n, "a namespace name", 255, "a file name in /run/netns")
}

// unitUnsafeNameChars are what neither an interface nor a namespace name
// may hold: '/' (a path), ':', whitespace, and what systemd expands or
// quotes on a unit line.
const unitUnsafeNameChars = "/: \t\n%$'\"\\"

// InterfaceNameProblem says what is wrong with a network interface name
// of the plan, "" when nothing: Linux interface names are 1-15 bytes
// (IFNAMSIZ), without '/', ':' or whitespace.
func InterfaceNameProblem(n string) string {
	return linkNameProblem(n, "an interface name", 15, "the kernel's IFNAMSIZ")
}

// linkNameProblem is the rule of both names: 1 to most bytes (limit says
// whose limit), not "." or "..", none of unitUnsafeNameChars; what is
// the name with its article ("an interface name").
func linkNameProblem(n, what string, most int, limit string) string {
	switch {
	case n == "" || len(n) > most:
		return fmt.Sprintf("must be 1-%d characters (%s)", most, limit)
	case n == "." || n == "..":
		return "is not " + what
	case strings.ContainsAny(n, unitUnsafeNameChars):
		return "has characters " + what + " cannot have ('/', ':', whitespace) or a unit cannot carry"
	}
	return ""
}

// socketGroup is a group name as useradd and groupadd take it (also with
// --badname's capitals and dots), or a numeric gid.
var socketGroup = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.-]{0,31}|[0-9]{1,10})$`)

// SocketGroupProblem says what is wrong with allocator.socket_group, ""
// when nothing (or when it is unset). The allocator looks the group up
// when it starts, and the value travels in the plan file, so it is
// checked here and again when a plan file is rendered.
func SocketGroupProblem(g string) string {
	if g == "" || socketGroup.MatchString(g) {
		return ""
	}
	return fmt.Sprintf("%q is not a group name or gid (allowed: a letter or '_', then up to 31 letters, digits, '_', '.', '-'; or a number)", echo.Value(g))
}

// ReservedSliceNames lists reservedSliceNames, sorted, for the reference.
func ReservedSliceNames() []string { return slices.Sorted(maps.Keys(reservedSliceNames)) }
