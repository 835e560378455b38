package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/partition/allocator"
)

// maxConfigFile bounds an --allocator-config file: a policy and a few
// numbers per node.
const maxConfigFile = 1 << 20

// ReadConfigFile reads an allocator.Config as JSON (what
// `allocator serve --allocator-config` takes: tests, and hosts managed
// without a numa-partition config). Unknown fields are errors: a typo
// in a policy name must not silently fall back to a default.
func ReadConfigFile(path string) (allocator.Config, error) {
	var cfg allocator.Config
	data, err := fsutil.ReadFileBounded(path, maxConfigFile)
	if err != nil {
		return cfg, fmt.Errorf("allocator config: %w", err)
	}
	return parseConfig(path, data)
}

// parseConfig decodes the allocator config read from path.
func parseConfig(path string, data []byte) (allocator.Config, error) {
	var cfg allocator.Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("allocator config %s: %w", path, err)
	}
	return cfg, nil
}
