// Package units is the one place sizes are parsed and printed: Kubernetes
// quantities in configs and manifests ("1Gi", "512Mi", "1G", "4096") and the
// kernel's kB sizes in sysfs ("2048kB" in hugepage directory names,
// "MemTotal: 1030484 kB" in node meminfo).
package units

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/numa-partition/numa-partition/internal/echo"
)

// ParseBytes parses a Kubernetes quantity that must be a whole, non-negative
// number of bytes ("1Gi", "512Mi", "2G", "1024"). Kubernetes parsing is used
// so that the tool agrees with kubelet on every suffix and on rounding.
func ParseBytes(s string) (uint64, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, fmt.Errorf("size %q is not a quantity (use bytes or a suffix: Ki, Mi, Gi, Ti, k, M, G, T): %w", echo.Value(s), err)
	}
	return quantityBytes(q, s)
}

// QuantityBytes converts a parsed quantity to bytes with the same checks as
// ParseBytes; errors name the quantity (q.String()).
func QuantityBytes(q resource.Quantity) (uint64, error) { return quantityBytes(q, q.String()) }

// quantityBytes checks q exactly, on its decimal value: its int64 and
// milli-value shortcuts fail for large binary suffixes ("1Ei" was called
// "not a whole number of bytes"). text is the quantity as errors show it.
func quantityBytes(q resource.Quantity, text string) (uint64, error) {
	if q.Sign() < 0 {
		return 0, fmt.Errorf("size %q is negative", echo.Value(text))
	}
	// The decimal value is unscaled × 10^-scale.
	d := q.AsDec()
	n := new(big.Int).Set(d.UnscaledBig())
	if scale := int64(d.Scale()); scale > 0 {
		var rem big.Int
		n.QuoRem(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(scale), nil), &rem)
		if rem.Sign() != 0 {
			return 0, fmt.Errorf("size %q is not a whole number of bytes", echo.Value(text))
		}
	} else if scale < 0 {
		if -scale > 19 {
			return 0, fmt.Errorf("size %q is too large (at most %d bytes)", echo.Value(text), int64(math.MaxInt64))
		}
		n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(-scale), nil))
	}
	if !n.IsInt64() {
		// kubelet reads quantities as int64.
		return 0, fmt.Errorf("size %q is too large (at most %d bytes)", echo.Value(text), int64(math.MaxInt64))
	}
	return n.Uint64(), nil
}

// FormatBytes prints bytes in the largest binary unit that divides them
// exactly ("1Gi", "1536Mi", "1000"), so the output parses back identically.
func FormatBytes(b uint64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"Ei", 60}, {"Pi", 50}, {"Ti", 40}, {"Gi", 30}, {"Mi", 20}, {"Ki", 10}} {
		if b != 0 && b%(1<<u.shift) == 0 {
			return strconv.FormatUint(b>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatUint(b, 10)
}

// ParseKernelKB parses the kernel's "<n>kB" (hugepage directory suffix) or
// "<n> kB" (meminfo) into bytes.
func ParseKernelKB(s string) (uint64, error) {
	num, ok := strings.CutSuffix(s, "kB")
	if !ok {
		return 0, fmt.Errorf("size %q does not end in kB", echo.Value(s))
	}
	num = strings.TrimSuffix(num, " ")
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || num == "" || num[0] == '+' {
		return 0, fmt.Errorf("size %q is not a number of kB", echo.Value(s))
	}
	if n > (1<<64-1)/1024 {
		return 0, fmt.Errorf("size %q is too large", echo.Value(s))
	}
	return n * 1024, nil
}

// HugepageResource is the Kubernetes resource name of a page size, e.g.
// "hugepages-2Mi" for 2 MiB pages, as kubelet spells it.
func HugepageResource(pageSize uint64) string {
	return "hugepages-" + FormatBytes(pageSize)
}
