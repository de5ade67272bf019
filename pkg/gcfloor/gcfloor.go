// Package gcfloor lets a service's heap grow to a floor before the Go
// garbage collector runs, while what the service keeps live is small.
//
// The collector starts a cycle when the heap has grown by GOGC percent
// (100 by default) over what the last cycle left live. perpgate's services
// keep a few MiB live while a loaded edge allocates a few hundred MiB a
// second, so at the default they collect dozens of times a second, and
// each cycle's fixed cost (every goroutine's stack scanned, the mark
// workers started and stopped, allocations made to assist) showed as a
// tenth of `perpgate serve`'s CPU, and requests that met a cycle made its
// p99. After each cycle the floor sets GOGC so that the next one starts at
// about Floor bytes; once the live heap is large enough that GOGC alone
// reaches past the floor, GOGC is left as it was, so a large heap grows
// no further than it would without the floor.
package gcfloor

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
)

// Env names the setting: the floor in MiB; 0 turns it off.
const Env = "PERPGATE_GC_FLOOR_MIB"

// DefaultMiB is the floor when Env is unset: a few times what a loaded
// gateway keeps live. It cut `perpgate serve`'s collections from 60 to 12
// a second under the bench's load, for about 22 MiB of resident memory.
const DefaultMiB = 32

// maxPercent bounds GOGC, so that a heap measured nearly empty (at start)
// does not get a percent in the tens of thousands; until the live heap has
// grown, the goal then stays somewhat below the floor.
const maxPercent = 1000

// Start applies the floor that lookup's Env names until the returned stop
// is called. An operator's GOGC wins: when it is set, or the floor is 0,
// Start does nothing. Only one floor may run in a process at a time.
func Start(lookup func(string) (string, bool)) (stop func(), err error) {
	floorMiB := DefaultMiB
	if v, ok := lookup(Env); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s: %q is not a whole number of MiB (0 turns the floor off)", Env, v)
		}
		floorMiB = n
	}
	if v, ok := lookup("GOGC"); (ok && v != "") || floorMiB == 0 {
		return func() {}, nil
	}
	const base = 100 // the runtime's GOGC when the environment names none
	f := &floor{bytes: uint64(floorMiB) << 20, base: base, current: base, samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"},
	}}
	f.arm()
	return func() {
		f.stopped.Store(true)
		debug.SetGCPercent(base)
	}, nil
}

// floor is the state of a running floor. Only the runtime's cleanup
// goroutine calls adjust, one call at a time.
type floor struct {
	bytes   uint64
	base    int
	current int
	samples []metrics.Sample
	stopped atomic.Bool
}

// sentinel is an object that lives until the next collection: its cleanup
// runs after each cycle and arms a new one.
type sentinel struct{ _ *byte }

func (f *floor) arm() {
	runtime.AddCleanup(&sentinel{}, func(f *floor) {
		if f.stopped.Load() {
			return
		}
		f.adjust()
		f.arm()
	}, f)
}

func (f *floor) adjust() {
	metrics.Read(f.samples)
	live, stacks, globals := f.samples[0].Value.Uint64(), f.samples[1].Value.Uint64(), f.samples[2].Value.Uint64()
	p := Percent(f.bytes, live, stacks+globals, f.base)
	if p != f.current {
		debug.SetGCPercent(p)
		f.current = p
	}
}

// Percent is the GOGC that puts the next heap goal at floor, given what the
// last cycle left live and the stacks and globals the runtime also scans
// (the goal is live + (live+roots)×GOGC/100); never below base, nor above
// maxPercent.
func Percent(floor, live, roots uint64, base int) int {
	scanned := live + roots
	if scanned == 0 || live >= floor {
		return base
	}
	p := (floor - live) * 100 / scanned
	switch {
	case p > maxPercent:
		return maxPercent
	case p < uint64(base):
		return base
	}
	return int(p)
}
