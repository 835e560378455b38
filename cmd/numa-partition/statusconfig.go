package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/numa-partition/numa-partition/slices/apply/status"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// reviewConfig is status's word on the config (#37): the config (--config),
// planned on this host now, against the plan applied below root, as the
// boot's `apply --plan` compares them. nil when there is no config file
// to compare.
func reviewConfig(c *cli.Context, root string) *status.ConfigReview {
	path := globalString(c, "config")
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	r := &status.ConfigReview{Path: path, State: status.ConfigError}
	now, _, err := loadPlan(c)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	rev, err := compareReviewed(filepath.Join(root, bundle.PlanPath), now, asReviewed(c))
	switch {
	case err != nil:
		r.Error = err.Error()
	case len(rev.changes) > 0:
		r.State, r.Change, r.Changes = status.ConfigChanged, rev.changes[0], len(rev.changes)
	default:
		r.State = status.ConfigApplied
	}
	return r
}

// configWarning is what status says of a config that is not the applied
// plan, "" when it is.
func configWarning(r *status.ConfigReview, generation int) string {
	switch {
	case r == nil || r.State == status.ConfigApplied:
		return ""
	case r.State == status.ConfigChanged:
		return fmt.Sprintf("the config %s plans otherwise than generation %d applied (%s; %d lines differ): not live, and the boot applies generation %d's plan only; `apply --dry-run` shows the change, `apply` takes it",
			r.Path, generation, r.Change, r.Changes, generation)
	}
	return fmt.Sprintf("the config %s could not be compared with generation %d applied: %s", r.Path, generation, r.Error)
}
