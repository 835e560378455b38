package record

import "github.com/numa-partition/numa-partition/slices/bundle"

// Network are the network objects the applied units make on the
// host (the bundle's Network): the bridge, the NAT table, each
// partition's namespace and the devices it holds. A pending record lists
// the previous generation's too, so there may be several bridges. A
// later apply removes those its plan no longer has (a renamed bridge,
// devices taken off a partition) and remove removes what the units'
// ExecStop= left.
type Network struct {
	Bridges    []string           `json:"bridges,omitempty"`
	NAT        bool               `json:"nat,omitempty"`
	Namespaces []bundle.Namespace `json:"namespaces,omitempty"`
}
