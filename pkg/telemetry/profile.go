package telemetry

import (
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// StartCPUProfile writes a CPU profile of the process to the file named by
// PERPGATE_CPU_PROFILE until the returned stop is called, an execution
// trace (go tool trace) to PERPGATE_EXEC_TRACE likewise, and when
// PERPGATE_ALLOC_PROFILE names a file, the allocation profile there at
// stop; without those settings it does nothing. `perpgate bench
// --cpuprofile` uses it, and an operator can profile any service the same way.
func StartCPUProfile(lookup func(string) (string, bool)) (stop func(), err error) {
	stopCPU, err := startCPU(lookup)
	if err != nil {
		return nil, err
	}
	stopTrace, err := startTrace(lookup)
	if err != nil {
		stopCPU()
		return nil, err
	}
	allocPath, _ := lookup("PERPGATE_ALLOC_PROFILE")
	return func() {
		stopCPU()
		stopTrace()
		if allocPath != "" {
			_ = writeAllocProfile(allocPath) // the process is stopping; nobody to tell
		}
	}, nil
}

func startCPU(lookup func(string) (string, bool)) (stop func(), err error) {
	path, ok := lookup("PERPGATE_CPU_PROFILE")
	if !ok || path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("PERPGATE_CPU_PROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("PERPGATE_CPU_PROFILE: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// startTrace records the scheduler's view (which goroutine ran when, and
// what woke it): where latency at low concurrency goes, which a CPU
// profile does not show.
func startTrace(lookup func(string) (string, bool)) (stop func(), err error) {
	path, ok := lookup("PERPGATE_EXEC_TRACE")
	if !ok || path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("PERPGATE_EXEC_TRACE: %w", err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("PERPGATE_EXEC_TRACE: %w", err)
	}
	return func() { trace.Stop(); f.Close() }, nil
}

func writeAllocProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
}
