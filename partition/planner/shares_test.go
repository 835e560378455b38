package planner

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const tib = uint64(1) << 40

// seedFacts: the seed machine (2 sockets × 4 CPUs; auto reserves CPU 0
// and 4, so each partition has 3 CPUs and the host 2) on a 1 TiB root.
var seedFacts = FixedFacts{Root: Filesystem{Path: "/", Device: 1, CapacityBytes: tib}, Tasks: 4194304}

func planWithFacts(t *testing.T, facts HostFacts, text string) (*Plan, error) {
	t.Helper()
	return NewPlanFor(synth(seedSpec), facts, mustParse(t, "[kubelet]\nhostname = \"h\"\n"+text))
}

func floorMi(b uint64) uint64 { return b >> 20 << 20 }

func TestSharesByCPUs(t *testing.T) {
	p, err := planWithFacts(t, seedFacts, "")
	require.NoError(t, err)
	// kubelet applies 10% as float32(0.1) = 13421773×2⁻²⁷, a little
	// more than a tenth: 1639 bytes more on 1 TiB.
	eviction := uint64(13421773) << 13
	assert.Equal(t, eviction, NodefsEviction(tib))
	assert.Equal(t, uint64(1639), eviction-tib/10)
	usable := tib - eviction
	var sum uint64
	for _, part := range p.Partitions {
		es := part.EphemeralStorage
		require.NotNil(t, es, part.Name)
		assert.Equal(t, floorMi(usable*3/8), es.ShareBytes, "3 of the machine's 8 CPUs")
		assert.Equal(t, eviction, es.EvictionBytes)
		assert.Equal(t, tib-eviction-es.ShareBytes, es.SystemReservedBytes)
		assert.ElementsMatch(t, []string{"host", map[string]string{"node0": "node1", "node1": "node0"}[part.Name]}, es.SharedWith)
		sum += es.ShareBytes

		assert.Equal(t, PIDShare{Limit: 4194304, Share: 4194304 * 3 / 8, SystemReserved: 4194304 * 5 / 8}, *part.PIDs)
	}
	assert.Equal(t, floorMi(usable*2/8), p.Host.Shares.EphemeralStorageBytes)
	assert.LessOrEqual(t, sum+p.Host.Shares.EphemeralStorageBytes, usable, "the Nodes and the host never promise more than the disk")
	assert.Equal(t, uint64(4194304*2/8), p.Host.Shares.PIDs)
}

func TestSharesOwnFilesystem(t *testing.T) {
	facts := seedFacts
	facts.Mounts = []Filesystem{
		{Path: "/var/lib/kubelet-node0", Device: 7, CapacityBytes: 100 << 30},
		{Path: "/srv/kubelets", Device: 8, CapacityBytes: 400 << 30},
	}
	p, err := planWithFacts(t, facts, "[[partition]]\nnodes = [1]\nephemeral_storage = \"25%\"\n")
	require.NoError(t, err)
	own := p.Partitions[0].EphemeralStorage
	assert.Equal(t, "/var/lib/kubelet-node0", own.Path)
	assert.Empty(t, own.SharedWith, "alone on its filesystem")
	assert.Equal(t, floorMi(100<<30-NodefsEviction(100<<30)), own.ShareBytes, "auto takes the whole filesystem")
	other := p.Partitions[1].EphemeralStorage
	assert.Equal(t, "/", other.Path)
	assert.Equal(t, tib/4, other.ShareBytes, "25% of the capacity")
	assert.Equal(t, floorMi(tib-NodefsEviction(tib)-tib/4), p.Host.Shares.EphemeralStorageBytes, "the host takes the rest of /")
}

func TestSharesNamed(t *testing.T) {
	p, err := planWithFacts(t, seedFacts, `
ephemeral_storage = "100Gi"
pids = "32768"
[host]
reserved_ephemeral_storage = "10%"
reserved_pids = "50%"
[[partition]]
nodes = [1]
ephemeral_storage = "auto"
pids = "auto"
`)
	require.NoError(t, err)
	assert.Equal(t, uint64(100<<30), p.Partitions[0].EphemeralStorage.ShareBytes)
	assert.Equal(t, floorMi(tib-NodefsEviction(tib)-100<<30-tib/10), p.Partitions[1].EphemeralStorage.ShareBytes, "the auto partition takes what the named ones leave")
	assert.Equal(t, tib/10, p.Host.Shares.EphemeralStorageBytes)
	assert.Equal(t, uint64(32768), p.Partitions[0].PIDs.Share)
	assert.Equal(t, uint64(4194304/2-32768), p.Partitions[1].PIDs.Share)
	assert.Equal(t, uint64(4194304/2), p.Host.Shares.PIDs)
}

func TestSharesErrors(t *testing.T) {
	for _, c := range []struct{ name, config, want string }{
		{"named shares larger than the disk", "[[partition]]\nnodes = [0]\nephemeral_storage = \"2Ti\"\n",
			`config.toml:5: key "partition[0].ephemeral_storage": ephemeral-storage on the filesystem of / (1Ti, less kubelet's 10% nodefs.available): the shares named (node0 2Ti) add up to 2Ti, more than the 966367640Ki there is; lower them`},
		{"not a size", "ephemeral_storage = \"lots\"\n", `key "kubelet.ephemeral_storage": ` + sizeErr(t, "lots") + `; allowed: "auto", a percentage ("25%") or a size ("100Gi")`},
		{"percentage over 100", "[host]\nreserved_pids = \"150%\"\n", `key "host.reserved_pids": "150%" is not a whole percentage from 0% to 100%; allowed: "auto", a percentage ("25%") or a number of pids ("32768")`},
		{"a size is no pid count", "pids = \"1Gi\"\n", `key "kubelet.pids": "1Gi" is not a number of pids`},
		{"pids over the limit", "pids = \"4000000\"\n", `the shares named (node0 4000000, node1 4000000) add up to 8000000, more than the 4194304 there is`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := planWithFacts(t, seedFacts, c.config)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

type brokenFacts struct{ FixedFacts }

func (brokenFacts) Filesystem(dir string) (Filesystem, error) {
	return Filesystem{}, errors.New("permission denied")
}

func TestSharesFacts(t *testing.T) {
	t.Run("a filesystem that cannot be read is an error on the root dir", func(t *testing.T) {
		_, err := planWithFacts(t, brokenFacts{seedFacts}, "")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "the filesystem of /: permission denied")
	})
	t.Run("without facts there are no shares", func(t *testing.T) {
		p, err := planWithFacts(t, nil, "")
		require.NoError(t, err)
		assert.Nil(t, p.Partitions[0].EphemeralStorage)
		assert.Nil(t, p.Partitions[0].PIDs)
	})
	t.Run("the longest mount point holds a dir", func(t *testing.T) {
		f := FixedFacts{Root: Filesystem{Path: "/"}, Mounts: []Filesystem{{Path: "/var"}, {Path: "/var/lib"}, {Path: "/var/lib/kubelet-node0"}}}
		for dir, want := range map[string]string{"/var/lib/kubelet-node0/pods": "/var/lib/kubelet-node0", "/var/lib/kubelet-node1": "/var/lib", "/variable": "/", "/var": "/var"} {
			fs, err := f.Filesystem(dir)
			require.NoError(t, err)
			assert.Equal(t, want, fs.Path, dir)
		}
	})
}
