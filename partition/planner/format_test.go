package planner

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteTable(t *testing.T) {
	p := mustPlan(t, seedSpec, "[[host.hugepages]]\nsize = \"1Gi\"\ncount = 2\n[[partition]]\nnodes = [1]\ntaints = [\"a=b:NoSchedule\"]")
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, p, 0))
	out := b.String()
	assert.Contains(t, out, "HOST     reserved CPUs 0,4  memory nodes 0-1  excluded nodes -\n")
	assert.Contains(t, out, "NETWORK  a namespace per partition on bridge npbr0 10.212.0.1/24 (10.212.0.0/24, masqueraded when leaving the host), MTU of the uplink\n")
	assert.Regexp(t, `\nnode0 +node0\.slice +0 +1-3 +0 +0 +1100Mi@0 +2×1Gi@0 +host1-node0 +10\.212\.0\.2 +10250/10248/- +red\n`, out)
	assert.Regexp(t, `\nnode1 +node1\.slice +1 +5-7 +4 +1 +1100Mi@1 +2×1Gi@1 +host1-node1 +10\.212\.0\.3 +10250/10248/- +blue\n`, out)
	assert.Contains(t, out, "  network          namespace np-node1: eth0 10.212.0.3/24 via 10.212.0.1 (host link np-node1)\n")
	assert.Contains(t, out, "  taints           a=b:NoSchedule\n")
	assert.Contains(t, out, "  labels           numa-partition.io/host=host1, numa-partition.io/partition=node0, numa-type=red\n")
}

// The default table is -o wide's without the wide columns, its lines of
// keys and values wrapped at the width, nothing else lost.
func TestWriteTableDefaultIsNarrow(t *testing.T) {
	p := mustPlan(t, seedSpec, "[[host.hugepages]]\nsize = \"1Gi\"\ncount = 2\n[[partition]]\nnodes = [1]\ntaints = [\"a=b:NoSchedule\"]")
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, p, 80))
	out := b.String()
	assert.Regexp(t, `\nPARTITION +NODES +CPUS +MEMORY NODES +HUGEPAGES +NODE NAME +ADDRESS\n`, out)
	assert.Regexp(t, `\nnode0 +0 +1-3 +0 +2×1Gi@0 +host1-node0 +10\.212\.0\.2\n`, out)
	assert.Contains(t, out, "NETWORK  a namespace per partition on bridge npbr0 10.212.0.1/24 (10.212.0.0/24,\n         masqueraded when leaving the host), MTU of the uplink\n")
	for _, line := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), 80, line)
	}
}
