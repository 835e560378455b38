package systemd

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	sd "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// DefaultJobTimeout bounds how long one unit job may take when the caller's
// context has no earlier deadline.
const DefaultJobTimeout = 90 * time.Second

// Conn is a Manager talking to a real systemd over D-Bus.
type Conn struct {
	c *sd.Conn
	// JobTimeout bounds each start/stop/restart job.
	JobTimeout time.Duration
}

var _ Manager = (*Conn)(nil)

// Connect opens a connection to systemd. An empty address means the local
// system: systemd's private socket when running as root, else the system
// bus. Any other address is a D-Bus bus address, e.g. a sandbox's system bus
// "unix:path=/proc/<pid1>/root/run/dbus/system_bus_socket". The
// connection lives until Close.
func Connect(address string) (*Conn, error) {
	// go-systemd and godbus tie a connection to the context it was opened
	// with; the caller's context is usually shorter than the connection.
	ctx := context.Background()
	var c *sd.Conn
	var err error
	switch {
	case address == "" && os.Geteuid() == 0:
		c, err = sd.NewSystemdConnectionContext(ctx)
	case address == "":
		c, err = sd.NewSystemConnectionContext(ctx)
	default:
		c, err = sd.NewConnection(func() (*godbus.Conn, error) {
			bus, err := godbus.Dial(address, godbus.WithContext(ctx))
			if err != nil {
				return nil, err
			}
			if err := bus.Auth([]godbus.Auth{godbus.AuthExternal(strconv.Itoa(os.Getuid()))}); err != nil {
				bus.Close()
				return nil, err
			}
			// A message bus wants Hello; systemd's private socket refuses it.
			if !strings.HasSuffix(address, "/systemd/private") {
				if err := bus.Hello(); err != nil {
					bus.Close()
					return nil, err
				}
			}
			return bus, nil
		})
	}
	if err != nil {
		where := address
		if where == "" {
			where = "the local system"
		}
		return nil, fmt.Errorf("connecting to systemd on %s: %w", where, err)
	}
	return &Conn{c: c, JobTimeout: DefaultJobTimeout}, nil
}

// Close closes the connection.
func (c *Conn) Close() { c.c.Close() }

// SystemState is the manager's SystemState: initializing, starting,
// running, degraded, maintenance, stopping.
func (c *Conn) SystemState(ctx context.Context) (string, error) {
	p, err := c.c.SystemStateContext(ctx)
	if err != nil {
		return "", fmt.Errorf("reading systemd's SystemState: %w", err)
	}
	s, _ := p.Value.Value().(string)
	return s, nil
}

// Reload implements Manager.
func (c *Conn) Reload(ctx context.Context) error {
	if err := c.c.ReloadContext(ctx); err != nil {
		return fmt.Errorf("daemon-reload: %w", err)
	}
	return nil
}

type jobFunc func(ctx context.Context, name, mode string, ch chan<- string) (int, error)

// job runs one unit job and waits for its result.
func (c *Conn) job(ctx context.Context, op, name string, f jobFunc) error {
	timeout := c.JobTimeout
	if timeout <= 0 {
		timeout = DefaultJobTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ch := make(chan string, 1)
	if _, err := f(ctx, name, "replace", ch); err != nil {
		return fmt.Errorf("%s %s: %w", op, name, err)
	}
	var result string
	select {
	case result = <-ch:
	case <-ctx.Done():
		result = "no result: " + ctx.Err().Error()
	}
	if result == "done" {
		return nil
	}
	je := &JobError{Op: op, Unit: name, Result: result}
	// Say why, with a fresh context: ours may be the reason we are here.
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	if u, err := c.Unit(dctx, name); err == nil {
		je.Detail = u.ActiveState + "/" + u.SubState
		if u.Result != "" && u.Result != "success" {
			je.Detail += ", result " + u.Result
		}
	}
	return je
}

// StartUnit implements Manager.
func (c *Conn) StartUnit(ctx context.Context, name string) error {
	return c.job(ctx, "start", name, c.c.StartUnitContext)
}

// StopUnit implements Manager.
func (c *Conn) StopUnit(ctx context.Context, name string) error {
	return c.job(ctx, "stop", name, c.c.StopUnitContext)
}

// RestartUnit implements Manager.
func (c *Conn) RestartUnit(ctx context.Context, name string) error {
	return c.job(ctx, "restart", name, c.c.RestartUnitContext)
}

// ResetFailed implements Manager.
func (c *Conn) ResetFailed(ctx context.Context, name string) error {
	if err := c.c.ResetFailedUnitContext(ctx, name); err != nil {
		return fmt.Errorf("reset-failed %s: %w", name, err)
	}
	return nil
}

// EnableUnitFiles implements Manager.
func (c *Conn) EnableUnitFiles(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	if _, _, err := c.c.EnableUnitFilesContext(ctx, names, false, true); err != nil {
		return fmt.Errorf("enable %s: %w", strings.Join(names, " "), err)
	}
	return nil
}

// DisableUnitFiles implements Manager.
func (c *Conn) DisableUnitFiles(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	if _, err := c.c.DisableUnitFilesContext(ctx, names, false); err != nil {
		return fmt.Errorf("disable %s: %w", strings.Join(names, " "), err)
	}
	return nil
}

// SetUnitProperties implements Manager.
func (c *Conn) SetUnitProperties(ctx context.Context, name string, props ...Property) error {
	ps := make([]sd.Property, len(props))
	names := make([]string, len(props))
	for i, p := range props {
		ps[i] = sd.Property{Name: p.Name, Value: godbus.MakeVariant(p.Value)}
		names[i] = p.Name
	}
	if err := c.c.SetUnitPropertiesContext(ctx, name, true, ps...); err != nil {
		return fmt.Errorf("set-property --runtime %s %s: %w", name, strings.Join(names, ","), err)
	}
	return nil
}

// unitType is the D-Bus interface suffix of a unit's type-specific properties.
func unitType(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return ""
	}
	t := name[i+1:]
	return strings.ToUpper(t[:1]) + t[1:]
}

// Unit implements Manager.
func (c *Conn) Unit(ctx context.Context, name string) (UnitInfo, error) {
	u := UnitInfo{Name: name}
	p, err := c.c.GetUnitPropertiesContext(ctx, name)
	if err != nil {
		return u, fmt.Errorf("reading %s: %w", name, err)
	}
	u.LoadState, _ = p["LoadState"].(string)
	u.ActiveState, _ = p["ActiveState"].(string)
	u.SubState, _ = p["SubState"].(string)
	u.UnitFileState, _ = p["UnitFileState"].(string)
	u.FragmentPath, _ = p["FragmentPath"].(string)
	switch t := unitType(name); t {
	case "Service", "Slice", "Scope", "Socket", "Mount":
		tp, err := c.c.GetUnitTypePropertiesContext(ctx, name, t)
		if err != nil {
			if u.LoadState != "loaded" {
				return u, nil // a unit that is not loaded has no type properties
			}
			return u, fmt.Errorf("reading %s properties of %s: %w", t, name, err)
		}
		u.ControlGroup, _ = tp["ControlGroup"].(string)
		u.Result, _ = tp["Result"].(string)
		u.MainPID, _ = tp["MainPID"].(uint32)
		if b, ok := tp["AllowedCPUs"].([]byte); ok {
			u.AllowedCPUs = bitmask.NewCPUSet(maskIDs(b)...)
		}
		if b, ok := tp["EffectiveCPUs"].([]byte); ok {
			u.EffectiveCPUs = bitmask.NewCPUSet(maskIDs(b)...)
		}
		if b, ok := tp["AllowedMemoryNodes"].([]byte); ok {
			u.AllowedMemoryNodes = bitmask.NewNodeSet(maskIDs(b)...)
		}
		if b, ok := tp["EffectiveMemoryNodes"].([]byte); ok {
			u.EffectiveMemoryNodes = bitmask.NewNodeSet(maskIDs(b)...)
		}
	}
	return u, nil
}

// ListUnits implements Manager.
func (c *Conn) ListUnits(ctx context.Context, patterns ...string) ([]UnitStatus, error) {
	us, err := c.c.ListUnitsByPatternsContext(ctx, nil, patterns)
	if err != nil {
		return nil, fmt.Errorf("listing units %s: %w", strings.Join(patterns, " "), err)
	}
	out := make([]UnitStatus, len(us))
	for i, u := range us {
		out[i] = UnitStatus{Name: u.Name, LoadState: u.LoadState, ActiveState: u.ActiveState, SubState: u.SubState}
	}
	return out, nil
}
