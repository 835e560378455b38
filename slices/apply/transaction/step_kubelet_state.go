package transaction

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/numa-partition/numa-partition/slices/apply/host"
	"github.com/numa-partition/numa-partition/slices/bundle"
)

// KindKubeletState moves a stopped kubelet's stale manager state aside
// (StateFiles) and stamps the settings it starts with (kubeletstate.go).
const KindKubeletState Kind = "kubelet-state"

// PrepareKubeletState moves Unit's StateFiles aside and stamps the
// settings of KubeletState; the undo puts both back.
type PrepareKubeletState struct {
	Unit         string               `json:"unit"`
	KubeletState *bundle.KubeletState `json:"kubeletState,omitempty"`
	StateFiles   []string             `json:"stateFiles,omitempty"`
}

func (PrepareKubeletState) Kind() Kind { return KindKubeletState }

func (a PrepareKubeletState) describe() string {
	if len(a.StateFiles) > 0 {
		return a.Unit + ": move /" + strings.Join(a.StateFiles, ", /") + " aside"
	}
	return a.Unit + ": stamp its managers' settings"
}

func (a PrepareKubeletState) run(e *Executor, _ context.Context, _ Current, _ *Result) ([]undo, error) {
	var undos []undo
	for _, rel := range a.StateFiles {
		from, to := rel, rel+StaleSuffix
		if err := host.Root(e.Root).Rename(from, to); err != nil && !errors.Is(err, os.ErrNotExist) {
			return undos, fmt.Errorf("moving /%s aside: %w", rel, err)
		}
		undos = append(undos, undo{phase: phaseFiles, what: "state file /" + rel, run: func(context.Context) error {
			return host.Root(e.Root).Rename(to, from)
		}})
	}
	// The first apply may come before kubelet made its root dir.
	ks := a.KubeletState
	stamped, err := e.writeOwn(path.Join(ks.Dir, KubeletStampName), "settings stamp of "+a.Unit,
		func() ([]byte, error) { return []byte(ks.Settings + "\n"), nil })
	return append(undos, stamped...), err
}
