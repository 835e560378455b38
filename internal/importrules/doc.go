// Package importrules holds, in its tests, the rules about which packages
// may link which that Go cannot see: a package that only talks to a
// service must not link the service (issue #39: slices/apply linked the
// allocator daemon and its Prometheus metrics for a client), and the
// planner's and the allocator's packages do not import each other's, and
// kubelet's managers (partition/policy), which both use, import neither.
// Each would come back with one new import line and no other test failing.
package importrules
