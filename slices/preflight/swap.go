package preflight

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// maxSwaps bounds /proc/swaps: a line per swap area.
const maxSwaps = 1 << 20

// SwapCheck is swap against the partition's kubelet's failSwapOn (its
// rendered KubeletConfiguration and drop-ins; kubelet's default is
// true): with swap on, a kubelet that fails on swap refuses to start, an
// error; one that does not is a warning, as kubeadm's: swap is supported
// on cgroup v2 only, and pods use none unless memorySwap says so.
type SwapCheck struct {
	Root       fsutil.Root
	Part       string
	FailSwapOn bool
	ConfigPath string // the KubeletConfiguration, for the message
}

// Name is Swap.
func (SwapCheck) Name() string { return NameSwap }

// Partition is the partition whose kubelet the swap concerns.
func (c SwapCheck) Partition() string { return c.Part }

// Check reads /proc/swaps below the root.
func (c SwapCheck) Check() (warnings, errs []error) {
	areas, err := swapAreas(c.Root)
	if err != nil {
		return []error{fmt.Errorf("partition %s: %w", c.Part, err)}, nil
	}
	if len(areas) == 0 {
		return nil, nil
	}
	on := fmt.Sprintf("swap is on (%s lists %s)", c.Root.Path("proc/swaps"), strings.Join(areas, ", "))
	if c.FailSwapOn {
		return nil, []error{fmt.Errorf("partition %s: %s and its kubelet's failSwapOn is true (%s): kubelet refuses to start; turn swap off (swapoff -a, and take it out of /etc/fstab), or set failSwapOn: false in a kubelet drop-in", c.Part, on, c.ConfigPath)}
	}
	return []error{fmt.Errorf("partition %s: %s and its kubelet runs with failSwapOn: false: swap is supported on cgroup v2 only, and pods use it only as memorySwap.swapBehavior says (https://kubernetes.io/docs/concepts/architecture/nodes/#swap-memory)", c.Part, on)}, nil
}

// swapAreas are the swap areas /proc/swaps lists below the root; none
// when the root has no /proc/swaps (a tree no kernel serves).
func swapAreas(r fsutil.Root) ([]string, error) {
	b, err := r.ReadFile("proc/swaps", maxSwaps)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading swap areas: %w", err)
	}
	var areas []string
	for i, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); i > 0 && len(f) > 0 { // the first line is the header
			areas = append(areas, f[0])
		}
	}
	return areas, nil
}
