package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 40: --help had no examples. The main commands' help (and help
// CMD) ends with them, each a command line whose flags the command has.
func TestHelpExamples_Issue40(t *testing.T) {
	app := newApp()
	for _, name := range []string{"discover", "plan", "render", "apply", "status", "remove"} {
		require.Contains(t, helpExamples, name)
		for _, line := range [][]string{{name, "--help"}, {"help", name}} {
			stdout, stderr, code := runMain(line...)
			require.Equal(t, 0, code, "%q: %s", line, stderr)
			_, ex, ok := strings.Cut(stdout, "\nEXAMPLES:\n")
			require.True(t, ok, "%q has examples:\n%s", line, stdout)
			assert.Contains(t, ex, "   numa-partition "+name, "%q", line)
			assert.Equal(t, strings.Count(helpExamples[name], "\n")+1, strings.Count(strings.TrimSuffix(ex, "\n"), "\n")+1, "%q: the examples, last", line)
		}
		for _, l := range strings.Split(helpExamples[name], "\n") {
			if strings.HasPrefix(l, "#") {
				continue
			}
			require.True(t, strings.HasPrefix(l, "numa-partition "+name), "%q", l)
			for _, part := range strings.Split(l, "&&") {
				words := strings.Fields(part)
				cmd := commandNamed(app.Commands, words[1])
				require.NotNil(t, cmd, "%q", part)
				for _, w := range words[2:] {
					if w == ">" {
						break
					}
					if n, ok := strings.CutPrefix(w, "-"); ok {
						assert.NotNil(t, flagByName(cmd.Flags, strings.TrimPrefix(n, "-")), "%s: %s has no flag %s", name, cmd.Name, w)
					}
				}
			}
		}
	}
}
