package transaction

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/numa-partition/numa-partition/slices/apply/record"
)

// An apply killed mid-drain of a partition that goes left a pending
// record of the new layout only: the next apply no longer saw the
// partition go, and its Node was neither drained nor deleted (seen in the
// e2e's layout step: node2's Node stayed behind after the merge). The
// pending record keeps the partitions, and Node names, it drops.
func TestPendingRecordKeepsThePartitionsThatGo(t *testing.T) {
	root := t.TempDir()
	prev := &record.Record{Generation: 3, Partitions: []record.Partition{
		{Name: "node0", NodeName: "h-node0"}, {Name: "node2", NodeName: "h-node2"}, {Name: "node4", NodeName: "old-node4"}}}
	rec := &record.Record{Generation: 4, Partitions: []record.Partition{{Name: "node0", NodeName: "h-node0"}, {Name: "node4", NodeName: "h-node4"}}}
	_, err := WritePending(root, rec, prev, Current{}, Desired{})
	require.NoError(t, err)
	got, err := record.Read(root)
	require.NoError(t, err)
	require.True(t, got.Pending)
	var names []string
	for _, p := range got.Partitions {
		names = append(names, p.Name+"="+p.NodeName)
	}
	assert.Equal(t, []string{"node0=h-node0", "node4=h-node4", "node2=h-node2", "node4=old-node4"}, names)
	assert.Len(t, rec.Partitions, 2, "the finished record is rec's own")
}
