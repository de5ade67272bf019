package gcfloor

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name               string
		floor, live, roots uint64
		want               int
	}{
		{"small live heap reaches the floor", 32 * mib, 7 * mib, 1 * mib, 312},
		{"live heap past half the floor keeps the default", 32 * mib, 20 * mib, 0, 100},
		{"live heap past the floor keeps the default", 32 * mib, 40 * mib, 0, 100},
		{"tiny heap is capped", 32 * mib, 100 << 10, 0, maxPercent},
		{"nothing measured yet", 32 * mib, 0, 0, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percent(tc.floor, tc.live, tc.roots, 100); got != tc.want {
				t.Errorf("Percent(%d MiB floor, %d live, %d roots) = %d, want %d", tc.floor/mib, tc.live, tc.roots, got, tc.want)
			}
		})
	}
}

func TestStartRaisesGOGCAfterACollectionAndStopRestoresIt(t *testing.T) {
	stop := start(t, map[string]string{Env: "64"})
	// The heap of a test binary is a few MiB: the floor lifts GOGC well
	// above 100 once a cycle has run.
	waitGOGC(t, func(p uint64) bool { return p > 200 }, "above 200 after a collection")
	stop()
	if p := gogc(); p != 100 {
		t.Fatalf("GOGC after stop = %d, want 100", p)
	}
	runtime.GC()
	runtime.GC()
	if p := gogc(); p != 100 {
		t.Fatalf("GOGC after stop and two collections = %d, want it to stay 100", p)
	}
}

// A live heap that grows past the floor brings GOGC back to the default.
func TestLargeLiveHeapKeepsTheDefault(t *testing.T) {
	start(t, map[string]string{Env: "8"})
	waitGOGC(t, func(p uint64) bool { return p > 100 }, "above 100 while little is live")
	keep := make([]byte, 16<<20) // live heap past the 8 MiB floor
	for i := range keep {
		keep[i] = byte(i)
	}
	waitGOGC(t, func(p uint64) bool { return p == 100 }, "back at 100 with 16 MiB live")
	runtime.KeepAlive(keep)
}

func TestOperatorSettingsWin(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"GOGC set":  {"GOGC": "100"},
		"floor off": {Env: "0"},
	} {
		t.Run(name, func(t *testing.T) {
			start(t, vars)
			runtime.GC()
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
			if p := gogc(); p != 100 {
				t.Fatalf("GOGC = %d, want the floor to leave it at 100", p)
			}
		})
	}
}

func TestBadFloor(t *testing.T) {
	for _, v := range []string{"-1", "32MiB", "lots"} {
		if _, err := Start(env(map[string]string{Env: v})); err == nil {
			t.Errorf("%s=%q: no error", Env, v)
		}
	}
}

// start starts a floor with the settings vars until the test ends.
func start(t *testing.T, vars map[string]string) (stop func()) {
	t.Helper()
	stop, err := Start(env(vars))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return stop
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func waitGOGC(t *testing.T, ok func(uint64) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		if ok(gogc()) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("GOGC = %d, want it %s", gogc(), what)
}
