package preflight

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/numa-partition/numa-partition/internal/fsutil"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// PortInUseError is a planned port that another process already listens on.
type PortInUseError struct {
	Port  bundle.Port
	PID   int
	Comm  string
	Unit  string // the unit the process runs in, when known
	Clash string // the other planned owner, for a port planned twice
	// Namespace is the partition's network namespace the port is in, ""
	// for the host's.
	Namespace string
}

func (e *PortInUseError) Error() string {
	if e.Clash != "" {
		return fmt.Sprintf("port %d is planned twice: %s and %s", e.Port.Port, e.Clash, e.Port.Owner)
	}
	who := fmt.Sprintf("pid %d (%s)", e.PID, e.Comm)
	if e.PID == 0 {
		who = "a process of another namespace or an exited process"
	}
	if e.Unit != "" {
		who += " in " + e.Unit
	}
	where := ""
	if e.Namespace != "" {
		where = " in network namespace " + e.Namespace
	}
	return fmt.Sprintf("port %d%s, planned for %s, is already in use by %s; free it or choose another port in the config",
		e.Port.Port, where, e.Port.Owner, who)
}

// PortCheck is the TCP ports the plan's daemons will listen on, in the
// host's network namespace (Namespace "") or in a partition's: each must
// be free, or held by a unit of this tool's (Own: the one that will own
// it, or one of the applied generation, which apply stops first). The
// sockets are read from /proc/net/tcp{,6} below the root: PID 1's for the
// host, for a partition's namespace those of a process in it (none when
// the namespace does not exist yet, or nothing runs in it: nothing can
// listen there then). Their owners are found through /proc/*/fd.
type PortCheck struct {
	Root      fsutil.Root
	Part      string // the partition of Namespace, "" for the host's
	Namespace string // the namespace's name below run/netns, "" for the host's
	Ports     []bundle.Port
	Own       map[string]bool // units of the applied generation
}

// Name is Port.
func (PortCheck) Name() string { return NamePort }

// Partition is the partition whose namespace is checked, "" for the host's.
func (c PortCheck) Partition() string { return c.Part }

// Check refuses the ports taken, each its own error.
func (c PortCheck) Check() (warnings, errs []error) {
	if err := duplicatePorts(c.Ports); err != nil {
		return nil, []error{err}
	}
	if len(c.Ports) == 0 {
		return nil, nil
	}
	tables, err := c.tables()
	if err != nil || len(tables) == 0 {
		return nil, errorsOf(err)
	}
	listening := map[uint64]int{} // socket inode -> port
	for _, f := range tables {
		if err := listeningSockets(c.Root, f, listening); err != nil {
			return nil, []error{err}
		}
	}
	busy := map[int]bool{}
	for _, port := range listening {
		busy[port] = true
	}
	var owners map[int]portOwner
	for _, p := range c.Ports {
		if !busy[p.Port] {
			continue
		}
		if owners == nil {
			owners = socketOwners(c.Root, listening)
		}
		o := owners[p.Port]
		if o.unit != "" && (o.unit == p.Unit || c.Own[o.unit]) {
			continue // our own daemon, from the previous apply
		}
		errs = append(errs, &PortInUseError{Port: p, PID: o.pid, Comm: o.comm, Unit: o.unit, Namespace: c.Namespace})
	}
	return nil, errs
}

// duplicatePorts refuses a port planned twice (the planner does too).
func duplicatePorts(planned []bundle.Port) error {
	seen := map[int]bundle.Port{}
	for _, p := range planned {
		if o, dup := seen[p.Port]; dup {
			return &PortInUseError{Port: p, Clash: o.Owner}
		}
		seen[p.Port] = p
	}
	return nil
}

// tables are the /proc/net/tcp{,6} to read (root-relative): PID 1's for
// the host's namespace, a process's in the partition's namespace for
// its; none when no process runs there.
func (c PortCheck) tables() ([]string, error) {
	pid := "1"
	if c.Namespace != "" {
		var err error
		if pid, err = c.processIn(); err != nil || pid == "" {
			return nil, err
		}
	}
	return []string{path.Join("proc", pid, "net/tcp"), path.Join("proc", pid, "net/tcp6")}, nil
}

// processIn is a process in the partition's network namespace
// (run/netns/<name> below the root, which apply's oneshot mounts), ""
// when the namespace does not exist yet or nothing runs in it.
func (c PortCheck) processIn() (string, error) {
	rel := path.Join(strings.TrimPrefix(bundle.NetnsDir, "/"), c.Namespace)
	fi, err := c.Root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("partition %s: checking ports in its network namespace: %w", c.Part, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || fi.Mode()&fs.ModeSymlink != 0 {
		return "", fmt.Errorf("partition %s: checking ports: %s is not a network namespace", c.Part, c.Root.Path(rel))
	}
	want := fmt.Sprintf("net:[%d]", st.Ino)
	procs, _ := c.Root.ReadDir("proc") // no procfs: nothing runs to hold a port
	for _, d := range procs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		if l, err := c.Root.Readlink(path.Join("proc", d.Name(), "ns/net")); err == nil && l == want {
			return d.Name(), nil
		}
	}
	return "", nil
}

// What the port check reads of procfs is read through a bound.
const (
	// maxTCPTable bounds /proc/net/tcp{,6}: 150 bytes a socket, room
	// for 400,000 sockets.
	maxTCPTable = 64 << 20
	// maxProcLine bounds /proc/PID/comm (16 bytes) and /proc/PID/cgroup
	// (a line per v1 hierarchy).
	maxProcLine = 64 << 10
)

// listeningSockets reads a /proc/net/tcp{,6} table's LISTEN sockets (rel
// below root).
func listeningSockets(r fsutil.Root, rel string, out map[uint64]int) error {
	f, err := r.Open(rel, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) && strings.HasSuffix(rel, "6") {
		return nil // IPv6 disabled
	}
	if err != nil {
		return fmt.Errorf("checking ports: %w", err)
	}
	defer f.Close()
	path := f.Name()
	table, err := fsutil.ReadBounded(f, path, maxTCPTable)
	if err != nil {
		return fmt.Errorf("checking ports: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(table))
	sc.Scan() // header
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 10 || fs[3] != "0A" { // 0A = TCP_LISTEN
			continue
		}
		_, portHex, ok := strings.Cut(fs[1], ":")
		port, err1 := strconv.ParseUint(portHex, 16, 16)
		inode, err2 := strconv.ParseUint(fs[9], 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("checking ports: %s: unexpected line %q", path, sc.Text())
		}
		out[inode] = int(port)
	}
	return sc.Err()
}

type portOwner struct {
	pid  int
	comm string
	unit string
}

// socketOwners finds, for each listening port, a process holding the socket.
func socketOwners(r fsutil.Root, listening map[uint64]int) map[int]portOwner {
	owners := map[int]portOwner{}
	procs, _ := r.ReadDir("proc") // no procfs: no owner to name, the clash is still refused
	for _, d := range procs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		fdDir := path.Join("proc", d.Name(), "fd")
		fds, _ := r.ReadDir(fdDir) // the process exited meanwhile, or is not ours to read
		for _, fd := range fds {
			l, err := r.Readlink(path.Join(fdDir, fd.Name()))
			if err != nil || !strings.HasPrefix(l, "socket:[") {
				continue
			}
			inode, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]"), 10, 64)
			if err != nil {
				continue
			}
			port, ok := listening[inode]
			if !ok {
				continue
			}
			if _, known := owners[port]; known {
				continue
			}
			comm, _ := r.ReadFile(path.Join("proc", d.Name(), "comm"), maxProcLine) // the name is a courtesy in the message
			owners[port] = portOwner{pid: pid, comm: strings.TrimSpace(string(comm)), unit: unitOfPID(r, d.Name())}
		}
	}
	return owners
}

// unitOfPID reads the unit a process runs in from its systemd cgroup path.
func unitOfPID(r fsutil.Root, pid string) string {
	b, err := r.ReadFile(path.Join("proc", pid, "cgroup"), maxProcLine)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 || (parts[1] != "name=systemd" && parts[0] != "0") {
			continue
		}
		for _, el := range strings.Split(parts[2], "/") {
			if strings.HasSuffix(el, ".service") || strings.HasSuffix(el, ".scope") {
				return el
			}
		}
	}
	return ""
}
