// Package host is the host below a root as apply, status and remove
// reach it: its files (opened through fsutil.Root, read bounded, written
// atomically), its network namespaces (entered without leaving the
// root) and its kubelets' credentials. It decides nothing: the
// transaction, the Nodes' orchestration and status share it so that
// each reaches the host one way.
package host
