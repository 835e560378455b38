// Package validation holds the rules for the values a plan carries into
// unit files, command lines and names: what a partition name, a path, a
// command-line argument, one of kubelet's extra arguments, a label, an
// interface or namespace name, a socket group, an image reference or a
// max-pods count may be. Each rule is a function of the value alone that
// says what is wrong with it in words a user can act on, "" when
// nothing. The planner applies them to the config and reports each
// problem at its file, line and key; planner.ParsePlan applies the same
// functions to a plan read from a file (which this build did not plan),
// so a plan file and a config never disagree on a value, and render takes
// the values as they are. Rules that need the plan as a
// whole (paths that collide, ports, where a path may lie) stay in the
// planner.
package validation
