//go:build race

package daemon_test

// raceEnabled makes TestMain build the daemon with -race too, so the
// integration tests check the daemon's own goroutines, not just the client's.
const raceEnabled = true
