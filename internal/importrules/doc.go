// Package importrules holds, in its tests, the rules about which packages
// may link which: a package that only talks to a service must not link the
// service. Go refuses import cycles on its own; these rules are the ones it
// cannot see, that a single new import would break without any test
// failing (issue #39).
package importrules
