// Package apply puts a rendered Bundle on a host, transactionally, and
// undoes it (Remove): the orchestration on top of the host transaction.
//
// Apply is: the preflight checks (slices/preflight), the apply lock, the
// host transaction (package transaction: gather, plan, execute with
// rollback under a record written ahead), and the Nodes the steps disrupt
// (package nodes): in a dry run only reported, with --drain drained first,
// in rolling waves when the caller gives the bundles on the way
// (rolling.go). Remove runs its own phases (remove.go) and undoes the
// record's files, units, slices and network with the transaction's
// ownership checks, leftovers and executor.
//
// What the transaction, status and remove share lives in leaves of their
// own, so that each reads the host and the record one way:
//
//   - transaction: the host transaction, its steps (one type per kind,
//     step_*.go there) and the phases that order them;
//   - record: the applied record's types, reading and writing it;
//   - host: the host below a root (files through fsutil.Root, network
//     namespaces, a kubelet's credentials);
//   - status: what is live of an applied generation, read from the record
//     and the host without linking this package;
//   - nodes: the partitions' Kubernetes Nodes a change disrupts: checked,
//     drained, deleted, let back in once Ready, and the Events on them.
//     This package decides which Nodes (affectedNodes, from the steps)
//     and what changed of each partition (partitionChanges), and hands
//     nodes those as data: nodes knows no step.
package apply
