package echo

import (
	"fmt"
	"strings"
	"testing"
)

func TestValue(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	for _, tt := range []struct {
		name, format string
		v            Value
		want         string
	}{
		{"short, quoted as %q quotes", "%q", Value("a\"b\n"), `"a\"b\n"`},
		{"short, as it is", "%s", Value("abc"), "abc"},
		{"exactly the limit is whole", "%s", Value(strings.Repeat("y", MaxBytes)), strings.Repeat("y", MaxBytes)},
		{"1 MiB, quoted", "%q", Value(long), `"` + strings.Repeat("x", MaxBytes) + `"… (1048576 bytes)`},
		{"1 MiB, as it is", "%v", Value(long), strings.Repeat("x", MaxBytes) + "… (1048576 bytes)"},
		// 79 ASCII bytes then a 3-byte character across the limit: the
		// character is left out whole, never cut in two.
		{"cut at a character boundary", "%s", Value(strings.Repeat("z", MaxBytes-1) + "€€"), strings.Repeat("z", MaxBytes-1) + "… (85 bytes)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := fmt.Sprintf(tt.format, tt.v); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if got, want := Value(long).Quoted(), fmt.Sprintf("%q", Value(long)); got != want {
		t.Errorf("Quoted() = %q, want %q", got, want)
	}
	if got := Value("abc").String(); got != "abc" {
		t.Errorf("String() = %q", got)
	}
}
