// Package status reads what is live of an applied generation (Read):
// the record against the host's files, units, cpusets and hugepage pools,
// each partition's namespace, usage and machine, its kubelet's and
// allocator's health and its Node in the API server. It changes nothing,
// and knows apply only through what apply left: the record
// (slices/apply/record), read through slices/apply/host as apply reads
// the host; it imports neither the transaction nor the Nodes'
// orchestration (internal/importrules).
package status
