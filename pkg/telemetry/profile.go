package telemetry

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"time"
)

// StartCPUProfile writes a CPU profile of the process to the file named by
// PERPGATE_CPU_PROFILE until the returned stop is called, an execution
// trace (go tool trace) to PERPGATE_EXEC_TRACE likewise, and when
// PERPGATE_ALLOC_PROFILE names a file, the allocation profile there at
// stop; with PERPGATE_PPROF_ADDR it serves /debug/pprof/ there until
// stop; without those settings it does nothing. `perpgate bench
// --cpuprofile` uses it, and an operator can profile any service the same way.
func StartCPUProfile(lookup func(string) (string, bool)) (stop func(), err error) {
	stopCPU, err := record(lookup, "PERPGATE_CPU_PROFILE", pprof.StartCPUProfile, pprof.StopCPUProfile)
	if err != nil {
		return nil, err
	}
	// The trace is the scheduler's view (which goroutine ran when, and what
	// woke it): where latency at low concurrency goes, which a CPU profile
	// does not show.
	stopTrace, err := record(lookup, "PERPGATE_EXEC_TRACE", trace.Start, trace.Stop)
	if err != nil {
		stopCPU()
		return nil, err
	}
	stopPprof, err := servePprof(lookup)
	if err != nil {
		stopCPU()
		stopTrace()
		return nil, err
	}
	allocPath, _ := lookup("PERPGATE_ALLOC_PROFILE")
	return func() {
		stopPprof()
		stopCPU()
		stopTrace()
		if allocPath != "" {
			_ = writeAllocProfile(allocPath) // the process is stopping; nobody to tell
		}
	}, nil
}

// servePprof serves net/http/pprof on the address PERPGATE_PPROF_ADDR
// names (opt-in, for a heap profile of a long run while it runs); it
// should be a loopback address, as the profiles show the process's insides.
func servePprof(lookup func(string) (string, bool)) (stop func(), err error) {
	addr, _ := lookup("PERPGATE_PPROF_ADDR")
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("PERPGATE_PPROF_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, nil
}

// record runs start on the file named by the setting env until the
// returned stop is called; without the setting it does nothing.
func record(lookup func(string) (string, bool), env string, start func(io.Writer) error, end func()) (stop func(), err error) {
	path, ok := lookup(env)
	if !ok || path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", env, err)
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", env, err)
	}
	return func() { end(); f.Close() }, nil
}

func writeAllocProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
}
