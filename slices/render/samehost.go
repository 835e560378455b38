package render

import (
	"reflect"
	"slices"

	"github.com/numa-partition/numa-partition/slices/bundle"
)

// SameHost reports whether bundles a and b make the same host: every file
// but the plan's own copy, every unit, pool, port, network object and
// record entry alike. Their plans may still differ in what nothing
// rendered holds, such as a NUMA node's memory size as the machine
// reported it, which moves between boots (the e2e's VM: node 1 lost 44
// MiB in a reboot) while kubelet and the allocator count the machine's
// own. Warnings are left out: they describe the plans, not the host.
func SameHost(a, b bundle.Bundle) bool {
	return reflect.DeepEqual(hostOf(a), hostOf(b))
}

// hostOf is b without what SameHost leaves out.
func hostOf(b bundle.Bundle) bundle.Bundle {
	b.Files = slices.DeleteFunc(slices.Clone(b.Files), func(f bundle.File) bool { return f.Path == bundle.PlanPath })
	b.Warnings = nil
	return b
}
