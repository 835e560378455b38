// Package templates holds the text of every file numa-partition renders
// (systemd units, drop-ins, containerd configs) as text/template files
// embedded in the binary. The templates only place values: every value is
// derived, validated and formatted by the planner and package render
// (slices/render) before it gets here, so a template never decides
// anything.
package templates

import (
	"bytes"
	"embed"
	"fmt"
	"sort"
	"strings"
	"text/template"
)

//go:embed *.tmpl
var files embed.FS

// set is parsed once; a template that does not parse is a build bug that
// the package's tests catch.
var set = template.Must(template.New("").Option("missingkey=error").Funcs(funcs).ParseFS(files, "*.tmpl"))

// funcs are the only helpers templates get: layout, no decisions.
var funcs = template.FuncMap{
	// join lists unit names the way systemd dependency settings take them.
	"join": func(s []string) string { return strings.Join(s, " ") },
}

// Names lists the embedded templates, sorted.
func Names() []string {
	var out []string
	for _, t := range set.Templates() {
		if t.Name() != "" {
			out = append(out, t.Name())
		}
	}
	sort.Strings(out)
	return out
}

// Execute renders the named template ("kubelet.service.tmpl") with data.
func Execute(name string, data any) ([]byte, error) {
	t := set.Lookup(name)
	if t == nil {
		return nil, fmt.Errorf("template %q does not exist (have %v)", name, Names())
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("rendering template %s: %w", name, err)
	}
	return b.Bytes(), nil
}
