package fsutil

import (
	"errors"
	"io/fs"
	"path"
	"strings"
)

// RemoveTemps removes what interrupted WriteFiles of rel left: its
// temporary files (TempPattern, a decimal suffix) in rel's directory, and
// nothing else. A kill between a write's create and its rename leaves one;
// the next command that owns rel calls this. It returns the paths removed.
func (r Root) RemoveTemps(rel string) ([]string, error) {
	dir, base, err := r.split(rel)
	if err != nil {
		return nil, err
	}
	entries, err := r.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimSuffix(TempPattern(base), "*")
	var removed []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || !decimal(name[len(prefix):]) || !e.Type().IsRegular() {
			continue
		}
		p := path.Join(dir, name)
		if err := r.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, err
		}
		removed = append(removed, r.Path(p))
	}
	return removed, nil
}

func decimal(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
