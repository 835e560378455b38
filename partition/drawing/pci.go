package drawing

import (
	"fmt"
	"strings"

	"github.com/numa-partition/numa-partition/numa"
)

// pciLines are the NICs, GPUs and accelerators among devs, one a line
// with their interfaces (a bond or bridge port as name→master); an
// SR-IOV physical function's virtual functions are counted on its line;
// the other functions (bridges, storage, unknown class) are counted.
func pciLines(devs []numa.PCIDevice) []string {
	byAddr := map[string]numa.PCIDevice{}
	for _, d := range devs {
		byAddr[d.Address] = d
	}
	folded := func(d numa.PCIDevice) bool {
		pf, ok := byAddr[d.PhysFn]
		return d.PhysFn != "" && ok && pciKind(d) != "" && pciKind(pf) != ""
	}
	vfs := map[string]int{}
	for _, d := range devs {
		if folded(d) {
			vfs[d.PhysFn]++
		}
	}
	var lines []string
	others := 0
	for _, d := range devs {
		kind := pciKind(d)
		switch {
		case folded(d):
			continue
		case kind == "":
			others++
			continue
		}
		line := kind + " " + d.Address
		var names []string
		for _, n := range d.Net {
			if n.Master != "" {
				names = append(names, n.Name+"→"+n.Master)
			} else {
				names = append(names, n.Name)
			}
		}
		if len(names) > 0 {
			line += " " + strings.Join(names, ",")
		}
		if d.PhysFn != "" {
			line += " (VF)"
		}
		if n := vfs[d.Address]; n > 0 {
			line += fmt.Sprintf(" +%d VFs", n)
		}
		lines = append(lines, line)
	}
	if others > 0 {
		lines = append(lines, fmt.Sprintf("%d other PCI functions", others))
	}
	return lines
}

// pciKind is what the drawing names a function by its class: NIC, GPU,
// accelerator, or "" for the rest. A function with an interface is a NIC
// whatever its class says (dumps often lack the class file).
func pciKind(d numa.PCIDevice) string {
	c := strings.TrimPrefix(strings.ToLower(d.Class), "0x")
	switch {
	case strings.HasPrefix(c, "02") || len(d.Net) > 0:
		return "NIC"
	case strings.HasPrefix(c, "03"):
		return "GPU"
	case strings.HasPrefix(c, "12"):
		return "accelerator"
	}
	return ""
}

// maxDistanceNodes is the largest matrix drawn; beyond it the card says
// where to read the distances.
const maxDistanceNodes = 32

// distanceCard is the topology's node distance matrix, row "from",
// column "to"; none for a single node.
func distanceCard(topo *numa.Topology) card {
	n := len(topo.Nodes)
	if n < 2 {
		return card{}
	}
	cd := card{color: "#888888", head: "NUMA distances"}
	if n > maxDistanceNodes {
		cd.lines = []string{fmt.Sprintf("%d NUMA nodes: numa-partition discover lists them", n)}
		return cd
	}
	w := 3
	for _, node := range topo.Nodes {
		w = max(w, len(fmt.Sprint(node.ID))+1)
		for _, d := range node.Distances {
			w = max(w, len(fmt.Sprint(d))+1)
		}
	}
	head := fmt.Sprintf("%*s", w, "")
	for _, node := range topo.Nodes {
		head += fmt.Sprintf("%*d", w, node.ID)
	}
	cd.table = append(cd.table, head)
	for _, node := range topo.Nodes {
		row := fmt.Sprintf("%*d", w, node.ID)
		for k := range topo.Nodes {
			if k < len(node.Distances) && node.Distances[k] >= 0 {
				row += fmt.Sprintf("%*d", w, node.Distances[k])
			} else {
				row += fmt.Sprintf("%*s", w, "-")
			}
		}
		cd.table = append(cd.table, row)
	}
	return cd
}
