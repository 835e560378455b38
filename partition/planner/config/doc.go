// Package config is numa-partition's configuration file: its types and
// the strict TOML reader that keeps every key's line. It decides nothing:
// defaults, validation and planning are the planner's, which reports each
// problem through a Collector at the key's file and line, as kubelet
// keeps its config's types (apis/config) apart from what reads them.
package config
