// Package systemd is numa-partition's narrow view of systemd's D-Bus API:
// the calls apply, status and remove make, each waiting for its job's
// result. Conn is the real client (go-systemd over godbus); systemdtest.Faulty wraps any
// Manager and fails a chosen call, so every step of a transaction can be
// proven to roll back.
package systemd

import (
	"context"
	"fmt"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// Manager is what apply, status and remove need from systemd. Job methods
// block until systemd reports the job's result (or ctx ends) and return a
// *JobError unless the result is "done".
type Manager interface {
	// Reload is `systemctl daemon-reload`.
	Reload(ctx context.Context) error
	StartUnit(ctx context.Context, name string) error
	StopUnit(ctx context.Context, name string) error
	RestartUnit(ctx context.Context, name string) error
	// ResetFailed clears a unit's "failed" state (`systemctl reset-failed`).
	ResetFailed(ctx context.Context, name string) error
	// EnableUnitFiles and DisableUnitFiles change the persistent
	// [Install] symlinks under /etc (not /run).
	EnableUnitFiles(ctx context.Context, names []string) error
	DisableUnitFiles(ctx context.Context, names []string) error
	// SetUnitProperties changes a unit's properties at runtime only
	// (`systemctl set-property --runtime`): it is gone at reboot, where
	// the unit files on disk take over.
	SetUnitProperties(ctx context.Context, name string, props ...Property) error
	// Unit reads the unit's state and the properties numa-partition cares about.
	Unit(ctx context.Context, name string) (UnitInfo, error)
	// ListUnits lists loaded units whose names match any of the glob patterns.
	ListUnits(ctx context.Context, patterns ...string) ([]UnitStatus, error)
	Close()
}

// Property is one unit property to set. Use the constructors: D-Bus is
// strict about the value's type.
type Property struct {
	Name  string
	Value any
}

// AllowedCPUs is the AllowedCPUs= property (cgroup v2 cpuset.cpus).
func AllowedCPUs(s bitmask.CPUSet) Property {
	return Property{Name: "AllowedCPUs", Value: maskBytes(s.IDs())}
}

// AllowedMemoryNodes is the AllowedMemoryNodes= property (cgroup v2 cpuset.mems).
func AllowedMemoryNodes(s bitmask.NodeSet) Property {
	return Property{Name: "AllowedMemoryNodes", Value: maskBytes(s.IDs())}
}

// UnitStatus is one row of ListUnits.
type UnitStatus struct {
	Name        string `json:"name"`
	LoadState   string `json:"loadState"`
	ActiveState string `json:"activeState"`
	SubState    string `json:"subState"`
}

// UnitInfo is a unit's state and the properties numa-partition reads back.
// PIDs are in systemd's PID namespace.
type UnitInfo struct {
	Name          string `json:"name"`
	LoadState     string `json:"loadState"`     // loaded, not-found, masked, ...
	ActiveState   string `json:"activeState"`   // active, inactive, failed, ...
	SubState      string `json:"subState"`      // running, exited, dead, ...
	UnitFileState string `json:"unitFileState"` // enabled, disabled, static, ""
	FragmentPath  string `json:"fragmentPath"`
	ControlGroup  string `json:"controlGroup"`
	// Result is the service's last result ("success", "exit-code", ...);
	// empty for units that are not services.
	Result  string `json:"result,omitempty"`
	MainPID uint32 `json:"mainPID,omitempty"`

	AllowedCPUs          bitmask.CPUSet  `json:"allowedCPUs"`
	AllowedMemoryNodes   bitmask.NodeSet `json:"allowedMemoryNodes"`
	EffectiveCPUs        bitmask.CPUSet  `json:"effectiveCPUs"`
	EffectiveMemoryNodes bitmask.NodeSet `json:"effectiveMemoryNodes"`
}

// Active says whether the unit is up: active, or a oneshot that ran and
// exited successfully.
func (u UnitInfo) Active() bool { return u.ActiveState == "active" }

// Enabled says whether the unit file is enabled (persistently or at runtime).
func (u UnitInfo) Enabled() bool {
	return u.UnitFileState == "enabled" || u.UnitFileState == "enabled-runtime"
}

// JobError says that a unit job did not finish with "done".
type JobError struct {
	Op     string // start, stop, restart
	Unit   string
	Result string // failed, timeout, canceled, dependency, skipped, or "no result: ..."
	Detail string // the unit's state after the job, when it could be read
}

func (e *JobError) Error() string {
	msg := fmt.Sprintf("%s %s: job %s", e.Op, e.Unit, e.Result)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

// maskBytes is systemd's D-Bus form of a CPU or node set ("ay"): bit i of
// byte i/8 is id i.
func maskBytes(ids []int) []byte {
	var m []byte
	for _, id := range ids {
		for len(m) <= id/8 {
			m = append(m, 0)
		}
		m[id/8] |= 1 << (id % 8)
	}
	return m
}

// maskIDs decodes maskBytes; systemd pads its answers to 64-bit words.
func maskIDs(m []byte) []int {
	var ids []int
	for i, b := range m {
		for bit := range 8 {
			if b&(1<<bit) != 0 {
				ids = append(ids, i*8+bit)
			}
		}
	}
	return ids
}
