package daemon

import (
	"io"
	"log/slog"
	"testing"
)

// testServer is NewServer for a test, whose cleanup waits until no write
// of the server is in progress. A journal append is answered first and
// synced after by a goroutine of its own (writeHead), which may still be
// writing in the state dir when the test returns; t.TempDir's removal of
// the dir then failed now and then ("directory not empty"). Cleanups run
// last registered first, so this one runs before the dir is removed.
func testServer(t testing.TB, opts ServerOptions) (*Server, error) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s, err := NewServer(opts)
	if err == nil {
		t.Cleanup(func() { waitWrites(s) })
	}
	return s, err
}

// waitWrites returns once no write of s, its journal sync included, is in
// progress.
func waitWrites(s *Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.writing {
		s.cond.Wait()
	}
}
