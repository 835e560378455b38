package numa

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/numa-partition/numa-partition/numa/bitmask"
)

// readPCIDevices finds PCI functions under devices/pci<domain>:<bus>,
// descending through bridges (and VMD domains, pci10000:e0 below a PCI
// function). It walks devices/ rather than bus/pci/devices because the
// latter is a directory of symlinks that dumps store in different ways;
// the device directories are the same everywhere. Symlinks (driver,
// subsystem, ...) are never followed.
func (f FS) readPCIDevices() ([]PCIDevice, error) {
	root := f.path("devices")
	entries, err := f.readDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return []PCIDevice{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", root, err)
	}
	devs := []PCIDevice{}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "pci") {
			if devs, err = f.walkPCI(filepath.Join(root, e.Name()), devs); err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(devs, func(a, b PCIDevice) int { return strings.Compare(a.Address, b.Address) })
	return devs, nil
}

func (f FS) walkPCI(dir string, devs []PCIDevice) ([]PCIDevice, error) {
	entries, err := f.readDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	return f.walkPCIEntries(dir, entries, devs)
}

// walkPCIEntries reads the PCI functions among dir's entries and descends
// into them and into host bridges; each directory is listed once.
func (f FS) walkPCIEntries(dir string, entries []fs.DirEntry, devs []PCIDevice) ([]PCIDevice, error) {
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		path := filepath.Join(dir, name)
		switch {
		case IsPCIAddress(name):
			below, err := f.readDir(path)
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", path, err)
			}
			d, err := f.readPCIDevice(path, name, below)
			if err != nil {
				return nil, err
			}
			devs = append(devs, d)
			if devs, err = f.walkPCIEntries(path, below, devs); err != nil {
				return nil, err
			}
		case strings.HasPrefix(name, "pci"):
			var err error
			if devs, err = f.walkPCI(path, devs); err != nil {
				return nil, err
			}
		}
	}
	return devs, nil
}

// IsPCIAddress reports whether s is a PCI function address: domain:bus:device.function, e.g. 0000:3b:00.0
// (domains of VMD controllers have 5 hex digits).
func IsPCIAddress(s string) bool {
	dom, rest, ok := strings.Cut(s, ":")
	if !ok || len(dom) < 4 || !isHex(dom) {
		return false
	}
	bus, rest, ok := strings.Cut(rest, ":")
	if !ok || len(bus) != 2 || !isHex(bus) {
		return false
	}
	dev, fn, ok := strings.Cut(rest, ".")
	return ok && len(dev) == 2 && isHex(dev) && len(fn) == 1 && fn[0] >= '0' && fn[0] <= '7'
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// readPCIDevice reads one function; entries are its directory's.
func (f FS) readPCIDevice(dir, address string, entries []fs.DirEntry) (PCIDevice, error) {
	d := PCIDevice{Address: address, Node: -1}
	node, ok, err := f.readInt(dir+"/numa_node", -1, bitmask.MaxNodes-1)
	if err != nil {
		return d, err
	}
	if ok {
		d.Node = int(node)
	}
	for _, v := range []struct {
		file   string
		digits int
		dst    *string
	}{{"class", 6, &d.Class}, {"vendor", 4, &d.Vendor}, {"device", 4, &d.Device}} {
		path := dir + "/" + v.file
		s, ok, err := f.read(path)
		if err != nil {
			return d, err
		}
		if !ok {
			continue
		}
		hex, hasPrefix := strings.CutPrefix(s, "0x")
		if !hasPrefix || len(hex) != v.digits || !isHex(hex) {
			return d, invalid(path, s, fmt.Errorf("want 0x and %d lower-case hex digits", v.digits))
		}
		*v.dst = s
	}
	for _, e := range entries {
		var err error
		switch e.Name() {
		case "physfn":
			d.PhysFn, err = f.linkedPCIAddress(dir + "/physfn")
		case "net":
			d.Net, err = f.readNetDevices(dir + "/net")
		}
		if err != nil {
			return d, err
		}
	}
	return d, nil
}

// linkedPCIAddress is the PCI address a link of a function names
// (physfn → ../0000:3b:00.0), read without following it.
func (f FS) linkedPCIAddress(path string) (string, error) {
	target, err := f.readlink(path)
	if err != nil {
		return "", err
	}
	if a := filepath.Base(target); IsPCIAddress(a) {
		return a, nil
	}
	return "", invalid(path, target, fmt.Errorf("a link to a PCI function (../0000:3b:00.0)"))
}

// readNetDevices lists a function's network interfaces (its net/
// directory) and the master each is a port of.
func (f FS) readNetDevices(dir string) ([]NetDevice, error) {
	entries, err := f.readDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	var out []NetDevice
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		nd := NetDevice{Name: e.Name()}
		if _, err := f.lstat(dir + "/" + e.Name() + "/master"); err == nil {
			target, err := f.readlink(dir + "/" + e.Name() + "/master")
			if err != nil {
				return nil, err
			}
			nd.Master = filepath.Base(target)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading %s/%s/master: %w", dir, e.Name(), err)
		}
		out = append(out, nd)
	}
	return out, nil
}

// PCIClassName names the PCI base class of a class code such as
// "0x020000", for display; "" when unknown.
func PCIClassName(class string) string {
	code, err := strconv.ParseUint(strings.TrimPrefix(class, "0x"), 16, 32)
	if err != nil {
		return ""
	}
	names := map[uint64]string{
		0x01: "storage", 0x02: "network", 0x03: "display", 0x04: "multimedia",
		0x05: "memory", 0x06: "bridge", 0x07: "communication", 0x08: "system",
		0x09: "input", 0x0b: "processor", 0x0c: "serial bus", 0x0d: "wireless",
		0x12: "accelerator", 0x13: "instrumentation",
	}
	return names[code>>16]
}
