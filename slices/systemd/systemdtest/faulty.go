// Package systemdtest holds test doubles of the systemd Manager: only
// tests import it.
package systemdtest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/numa-partition/numa-partition/slices/systemd"
)

// ErrInjected is the error Faulty returns.
var ErrInjected = errors.New("injected fault")

// Faulty wraps a Manager and fails one mutating call (Reload, Start, Stop,
// Restart, Enable, Disable, SetUnitProperties): the FailAt-th, counted from
// 1. With After set the call is made first and its success reported as a
// failure, like a job that ran but whose result was lost to a timeout. Only
// that one call fails, so the rollback that follows runs normally. Reads
// are passed through. Calls records every mutating call, for assertions.
type Faulty struct {
	systemd.Manager
	FailAt int
	After  bool

	mu    sync.Mutex
	n     int
	Calls []string
}

// Count returns how many mutating calls were made so far.
func (f *Faulty) Count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

func (f *Faulty) do(what string, call func() error) error {
	f.mu.Lock()
	f.n++
	fail := f.n == f.FailAt
	f.Calls = append(f.Calls, what)
	f.mu.Unlock()
	if !fail {
		return call()
	}
	if f.After {
		if err := call(); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s: %w (call %d)", what, ErrInjected, f.FailAt)
}

// Reload implements Manager.
func (f *Faulty) Reload(ctx context.Context) error {
	return f.do("daemon-reload", func() error { return f.Manager.Reload(ctx) })
}

// StartUnit implements Manager.
func (f *Faulty) StartUnit(ctx context.Context, name string) error {
	return f.do("start "+name, func() error { return f.Manager.StartUnit(ctx, name) })
}

// StopUnit implements Manager.
func (f *Faulty) StopUnit(ctx context.Context, name string) error {
	return f.do("stop "+name, func() error { return f.Manager.StopUnit(ctx, name) })
}

// RestartUnit implements Manager.
func (f *Faulty) RestartUnit(ctx context.Context, name string) error {
	return f.do("restart "+name, func() error { return f.Manager.RestartUnit(ctx, name) })
}

// EnableUnitFiles implements Manager.
func (f *Faulty) EnableUnitFiles(ctx context.Context, names []string) error {
	return f.do(fmt.Sprint("enable ", names), func() error { return f.Manager.EnableUnitFiles(ctx, names) })
}

// DisableUnitFiles implements Manager.
func (f *Faulty) DisableUnitFiles(ctx context.Context, names []string) error {
	return f.do(fmt.Sprint("disable ", names), func() error { return f.Manager.DisableUnitFiles(ctx, names) })
}

// SetUnitProperties implements Manager.
func (f *Faulty) SetUnitProperties(ctx context.Context, name string, props ...systemd.Property) error {
	return f.do("set-property "+name, func() error { return f.Manager.SetUnitProperties(ctx, name, props...) })
}

// ResetFailed implements Manager. It is only used while rolling back, so
// it is passed through and not counted.
func (f *Faulty) ResetFailed(ctx context.Context, name string) error {
	return f.Manager.ResetFailed(ctx, name)
}
