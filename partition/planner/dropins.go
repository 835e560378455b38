package planner

import (
	"encoding/json"
	"fmt"

	sjson "sigs.k8s.io/json"

	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/partition/planner/validation"
)

// kubeletDropIns are partition s's drop-ins: [kubelet]'s, then its
// [[partition]] entry's, which kubelet merges over it. Each is held as
// JSON values (what kubelet reads, and what a plan file gives back);
// a TOML value JSON has no form for (nan, inf) is reported at its key.
func kubeletDropIns(c *config.Config, s settings, col *config.Collector) []KubeletDropIn {
	var out []KubeletDropIn
	add := func(key, file string, fields map[string]any) {
		if len(fields) == 0 {
			return // an empty table: nothing to merge
		}
		settings, err := jsonValues(fields)
		if err != nil {
			col.Add(key, "holds a value a KubeletConfiguration cannot carry: %v", err)
			return
		}
		out = append(out, KubeletDropIn{File: file, Settings: settings})
	}
	add("kubelet.drop_in", DropInFile, c.Kubelet.DropIn)
	if s.p != nil {
		add(s.pre+"drop_in", PartitionDropInFile, s.p.DropIn)
	}
	return out
}

// jsonValues is fields as JSON gives them back: numbers as int64 or
// float64, dates as strings, arrays as []any.
func jsonValues(fields map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := sjson.UnmarshalCaseSensitivePreserveInts(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkDropIns reports each drop-in's problems at its key and field:
// [kubelet]'s once, each [[partition]] entry's once.
func (pl *planning) checkDropIns() {
	c := pl.c
	pl.checkDropIn("kubelet.drop_in", c.Kubelet.DropIn)
	for i, p := range c.Partitions {
		pl.checkDropIn(fmt.Sprintf("partition[%d].drop_in", i), p.DropIn)
	}
}

func (pl *planning) checkDropIn(key string, fields map[string]any) {
	for _, p := range validation.DropInProblems(fields) {
		if p.Warning {
			pl.warn("%s.%s: %s", key, p.Field, p.Msg)
			continue
		}
		pl.col.Add(key+"."+p.Field, "%s", config.Whole(p.Msg))
	}
}

// CheckDropIns checks a plan file's drop-ins by the rules plan made
// them by: the fields numa-partition manages or denies are refused, and
// so is a value kubelet could not read. CheckPlanFile calls it.
func CheckDropIns(p *Partition) error {
	k := &p.Kubelet
	if len(k.DropIns) > 0 && k.ConfigDir != ConfigDirOf(k.ConfigPath) {
		return fmt.Errorf("partition %s: kubelet.configDir %q must be %q (kubelet.configPath's)", p.Name, k.ConfigDir, ConfigDirOf(k.ConfigPath))
	}
	if len(k.DropIns) == 0 && k.ConfigDir != "" {
		return fmt.Errorf("partition %s: kubelet.configDir %q without drop-ins", p.Name, k.ConfigDir)
	}
	seen := map[string]bool{}
	for _, d := range k.DropIns {
		if d.File != DropInFile && d.File != PartitionDropInFile || seen[d.File] {
			return fmt.Errorf("partition %s: kubelet.dropIns: file %q: allowed are %s and %s, once each", p.Name, d.File, DropInFile, PartitionDropInFile)
		}
		seen[d.File] = true
		for _, problem := range validation.DropInProblems(d.Settings) {
			if !problem.Warning {
				return fmt.Errorf("partition %s: kubelet.dropIns %s: field %s %s", p.Name, d.File, problem.Field, problem.Msg)
			}
		}
	}
	return nil
}
