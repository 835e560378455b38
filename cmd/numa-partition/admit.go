package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/partition/allocator/daemon"
	"github.com/numa-partition/numa-partition/partition/allocator/daemonapi"
)

func admitCommand() *cli.Command {
	flags := append(allocClientFlags(),
		&cli.StringFlag{Name: "filename", Aliases: []string{"f"}, Required: true, Usage: "Pod or VirtualMachineInstance manifest `FILE` (YAML or JSON; - for standard input)"},
	)
	return &cli.Command{
		Name:  "admit",
		Usage: "ask a partition's allocator to admit a Pod or VirtualMachineInstance",
		Description: "For capacity planning: the admission is recorded in the allocator's state, but it places\n" +
			"nothing; real containers are placed when containerd creates them (the allocator's NRI\n" +
			"plugin, docs/allocator.md). Release such an admission with `numa-partition release`.\n" +
			"Without --partition the pod goes to the one partition whose node labels contain all of\n" +
			"its spec.nodeSelector (each daemon reports its labels). Exit status 1 when the pod is\n" +
			"rejected (it does not fit: the reason says why), 2 on errors.",
		Flags: flags,
		Action: func(c *cli.Context) error {
			format, err := outputFormat(c)
			if err != nil {
				return err
			}
			manifest, err := allocReadManifest(c.String("filename"))
			if err != nil {
				return err
			}
			// Decoding here too gives the field-precise error without a
			// daemon, and the nodeSelector for choosing one.
			m, err := daemon.DecodeManifest(manifest)
			if err != nil {
				return fmt.Errorf("%s: %w", c.String("filename"), err)
			}
			targets, err := allocTargets(c)
			if err != nil {
				return err
			}
			ctx, cancel := allocContext(c)
			defer cancel()
			target := targets[0]
			if c.String("partition") == "" {
				if target, err = allocMatchPartition(ctx, c.App.ErrWriter, targets, m.NodeSelector()); err != nil {
					return err
				}
			}
			resp, err := target.client.Admit(ctx, manifest)
			if err != nil {
				return fmt.Errorf("partition %s: %w", target.partition, err)
			}
			if structured(format) {
				if err := writeData(c.App.Writer, format, kindAdmission, newAdmission(resp)); err != nil {
					return err
				}
			} else {
				allocPrintDecision(c.App.Writer, resp)
			}
			if !resp.Decision.Admitted {
				return exitError{code: 1}
			}
			return nil
		},
	}
}

func allocReadManifest(name string) ([]byte, error) {
	const limit = daemon.DefaultMaxRequestBytes
	if name != "-" {
		// A file must be a regular one (a FIFO would block), refused
		// from its size before it is read.
		return fsutil.ReadFileBounded(name, limit)
	}
	data, err := io.ReadAll(io.LimitReader(os.Stdin, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes, the daemon's request limit", name, limit)
	}
	return data, nil
}

// allocMatchPartition picks the one partition whose labels satisfy the
// selector, asking each daemon for its labels; a daemon that does not
// answer is a warning on stderr.
func allocMatchPartition(ctx context.Context, stderr io.Writer, targets []allocTarget, selector map[string]string) (allocTarget, error) {
	var matches []allocTarget
	var described []string
	for _, t := range targets {
		h, err := t.client.Health(ctx)
		if err != nil {
			warnAll(stderr, fmt.Sprintf("admit: skipping partition %s: %v", t.partition, err))
			continue
		}
		described = append(described, fmt.Sprintf("%s %s", t.partition, allocFormatLabels(h.Labels)))
		if allocSelectorMatches(selector, h.Labels) {
			matches = append(matches, t)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return allocTarget{}, fmt.Errorf("no partition matches the pod's nodeSelector %s; partitions: %s; pass --partition", allocFormatLabels(selector), strings.Join(described, "; "))
	}
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = m.partition
	}
	return allocTarget{}, fmt.Errorf("the pod's nodeSelector %s matches %d partitions (%s); narrow it or pass --partition", allocFormatLabels(selector), len(matches), strings.Join(names, ", "))
}

func allocSelectorMatches(selector, labels map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func allocFormatLabels(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + l[k]
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func allocPrintDecision(w io.Writer, r daemonapi.AdmitResponse) {
	d := r.Decision
	verdict := "admitted"
	if !d.Admitted {
		verdict = "REJECTED"
	}
	extra := ""
	if r.Repeated {
		extra = ", already admitted before"
	}
	fmt.Fprintf(w, "%s %s (uid %s) %s by partition %s (generation %d%s)\n", shown(r.Kind), shown(d.Pod), shown(string(d.PodUID)), verdict, shown(r.Partition), r.Generation, extra)
	if d.Reason != "" {
		fmt.Fprintf(w, "  reason: %s\n", shown(d.Reason))
	}
	if d.Admitted && !d.Pinned {
		fmt.Fprintln(w, "  not Guaranteed QoS: memory not pinned to NUMA nodes")
	}
	for _, ctr := range d.Containers {
		fmt.Fprintf(w, "  %s: NUMA %s: %s\n", shown(ctr.Name), ctr.NUMANodes, allocResourceList(ctr.Memory))
	}
}
