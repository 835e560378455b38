// Package config is numa-partition's configuration file: its types, the
// defaults of its keys (defaults.go) and the strict TOML reader that
// keeps every key's line. It decides nothing: validation and planning
// are the planner's, which applies the defaults and reports each problem
// through a Collector at the key's file and line, as kubelet keeps its
// config's types and defaults (apis/config, v1beta1) apart from
// validation and from what reads them.
package config
