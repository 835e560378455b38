package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command that prints no objects refuses --output json|yaml instead of
// ignoring it (#26: diff, config init and completion printed text and
// exited 0); the commands that print objects take it before or after
// their name.
func TestOutputRefusedWhereNoObjectIsPrinted(t *testing.T) {
	for _, args := range [][]string{
		{"diff", "-o", "json"},
		{"config", "check", "-o", "json"},
		{"config", "init", "--output=yaml"},
		{"completion", "-o", "json", "bash"},
		{"-o", "json", "hugepages", "apply"},
		{"kubelet-state", "repair", "-o", "json", "--root-dir", "/nonexistent"},
	} {
		_, err := runCLI(args...)
		assert.ErrorContains(t, err, "prints no objects, only text; these do: discover, plan,", "%q", args)
	}
	out, err := runCLI("version", "-o", "json")
	require.NoError(t, err)
	assert.Contains(t, out, `"kind": "Version"`)
	out, err = runCLI("-o", "yaml", "version")
	require.NoError(t, err)
	assert.Contains(t, out, "kind: Version")
	_, err = runCLI("config", "check", "-o", "table", "--config", "/nonexistent/config.toml")
	assert.NotContains(t, errString(err), "prints no objects")
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
