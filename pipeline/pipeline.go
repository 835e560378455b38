// Package pipeline is numa-partition's one way from a machine and a
// config to a plan and a bundle: discover → config → plan → render, given
// options, for the CLI's commands, the allocator daemon's and the tests'.
// It reads the sysfs tree and the config file; everything after is pure.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"

	"github.com/numa-partition/numa-partition/numa"
	"github.com/numa-partition/numa-partition/partition/planner"
	"github.com/numa-partition/numa-partition/partition/planner/config"
	"github.com/numa-partition/numa-partition/slices/bundle"
	"github.com/numa-partition/numa-partition/slices/render"
)

// Options say where the machine and the config are, and what the plan
// takes beside them.
type Options struct {
	// Sysfs is the sysfs tree to discover: "/sys", or a dump.
	Sysfs string
	// Config is the config file. A missing file means all defaults (with
	// a warning), unless ConfigRequired: it was asked for by name.
	Config         string
	ConfigRequired bool
	// Hostname, when set, plans for this host name instead of the
	// config's kubelet.hostname.
	Hostname string
	// FactsFile, when set, plans with the target's facts as `discover
	// --host-facts-out` wrote them there (its host name included), never
	// this machine's.
	FactsFile string
	// Facts are the host's facts beside sysfs (filesystems, pid limit,
	// interfaces, cgroup mode) without a FactsFile: this machine's.
	Facts planner.HostFacts
	// FactsHostname is, without a FactsFile, the host name when neither
	// Hostname nor the config's kubelet.hostname says: this machine's.
	// Planning stays pure: it is asked only then.
	FactsHostname func() (string, error)
	// Figures, when set, are the machine's moving figures to plan with
	// instead of those discovered (planner.Figures: a reviewed plan's).
	Figures *planner.Figures
	Log     *slog.Logger
}

// Plan discovers the machine, reads the config (and the facts file) and
// plans.
func Plan(ctx context.Context, o Options) (*planner.Plan, *numa.Topology, error) {
	if o.FactsFile != "" {
		declared, err := planner.LoadFacts(o.FactsFile)
		if err != nil {
			return nil, nil, err
		}
		// The file's host name, never this machine's: the plan is of
		// the target (none in the file: Hostname or kubelet.hostname
		// must say).
		o.Facts = declared.Facts
		o.FactsHostname = func() (string, error) { return declared.Hostname, nil }
	}
	topo, err := numa.NewFS(o.Sysfs).WithContext(ctx).Discover()
	if err != nil {
		return nil, nil, fmt.Errorf("discover: %w", err)
	}
	if o.Figures != nil {
		topo, o.Facts = o.Figures.Topology(topo), o.Figures.Facts(o.Facts)
	}
	cfg, err := o.LoadConfig()
	if err != nil {
		return nil, nil, err
	}
	if o.Hostname != "" {
		cfg.Kubelet.Hostname = o.Hostname
	}
	if cfg.Kubelet.Hostname == "" && o.FactsHostname != nil {
		h, err := o.FactsHostname()
		if err != nil {
			return nil, nil, fmt.Errorf("reading the host name (set kubelet.hostname): %w", err)
		}
		cfg.Kubelet.Hostname = h
	}
	plan, err := planner.NewPlanFor(topo, o.Facts, cfg)
	if err != nil {
		return nil, nil, configProblems(err)
	}
	return plan, topo, nil
}

// Bundle plans, then renders the plan with ro.
func Bundle(ctx context.Context, o Options, ro render.Options) (bundle.Bundle, *planner.Plan, error) {
	plan, _, err := Plan(ctx, o)
	if err != nil {
		return bundle.Bundle{}, nil, err
	}
	b, err := render.RenderWith(*plan, ro)
	return b, plan, err
}

// LoadConfig reads the config file; a missing one is all defaults unless
// it was asked for.
func (o Options) LoadConfig() (*config.Config, error) {
	cfg, err := config.LoadFile(o.Config)
	if err == nil {
		return cfg, nil
	}
	if errors.Is(err, fs.ErrNotExist) && !o.ConfigRequired {
		log := o.Log
		if log == nil {
			log = slog.Default()
		}
		log.Warn("no config file, using the defaults (numa-partition config init --write writes one)", "path", o.Config)
		return &config.Config{}, nil
	}
	return nil, configProblems(err)
}

// configProblems says a config's problems one per line under a count
// (one problem stays as it is).
func configProblems(err error) error {
	var es config.Errors
	if !errors.As(err, &es) || len(es) < 2 {
		return err
	}
	return fmt.Errorf("%d problems in the config:\n%s", len(es), strings.Join(es.Lines("  "), "\n"))
}
