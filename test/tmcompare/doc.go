// Package tmcompare holds only tests: a differential test and benchmarks
// that run kubelet's real Topology Manager (k8s.io/kubernetes v1.37.2) and
// this project's topologymanager package on the same inputs. It is its own
// module so that the product's go.mod never requires k8s.io/kubernetes.
package tmcompare
