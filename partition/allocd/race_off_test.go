//go:build !race

package allocd_test

const raceEnabled = false
