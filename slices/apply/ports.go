package apply

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

	"github.com/numa-partition/numa-partition/internal/fsutil"
)

// PortInUseError is a planned port that another process already listens on.
type PortInUseError struct {
	Port  PlannedPort
	PID   int
	Comm  string
	Unit  string // the unit the process runs in, when known
	Clash string // the other planned owner, for a port planned twice
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
	return fmt.Sprintf("port %d, planned for %s, is already in use by %s; free it or choose another port in the config",
		e.Port.Port, e.Port.Owner, who)
}

// checkPorts refuses planned ports that a process outside the planned
// units listens on. The sockets are those of root's PID 1 network
// namespace; their owners are found through root/proc/*/fd.
func checkPorts(root string, planned []PlannedPort) error {
	seen := map[int]PlannedPort{}
	for _, p := range planned {
		if o, dup := seen[p.Port]; dup {
			return &PortInUseError{Port: p, Clash: o.Owner}
		}
		seen[p.Port] = p
	}
	if len(planned) == 0 {
		return nil
	}
	listening := map[uint64]int{} // socket inode -> port
	for _, f := range []string{"proc/1/net/tcp", "proc/1/net/tcp6"} {
		if err := listeningSockets(root, f, listening); err != nil {
			return err
		}
	}
	busy := map[int]bool{}
	for _, port := range listening {
		busy[port] = true
	}
	var clash []PlannedPort
	for _, p := range planned {
		if busy[p.Port] {
			clash = append(clash, p)
		}
	}
	if len(clash) == 0 {
		return nil
	}
	owners := socketOwners(root, listening)
	for _, p := range clash {
		o := owners[p.Port]
		if o.unit != "" && o.unit == p.Unit {
			continue // our own daemon, from the previous apply
		}
		return &PortInUseError{Port: p, PID: o.pid, Comm: o.comm, Unit: o.unit}
	}
	return nil
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
func listeningSockets(root, rel string, out map[uint64]int) error {
	f, err := rootOf(root).Open(rel, os.O_RDONLY, 0)
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
func socketOwners(root string, listening map[uint64]int) map[int]portOwner {
	owners := map[int]portOwner{}
	r := rootOf(root)
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
			owners[port] = portOwner{pid: pid, comm: strings.TrimSpace(string(comm)), unit: unitOfPID(root, d.Name())}
		}
	}
	return owners
}

// unitOfPID reads the unit a process runs in from its systemd cgroup path.
func unitOfPID(root, pid string) string {
	b, err := rootOf(root).ReadFile(path.Join("proc", pid, "cgroup"), maxProcLine)
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
