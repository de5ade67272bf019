package connector

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/testenv"
)

// crashRig drives a file store through placements and restarts, keeping
// what each key must read. Close writes nothing a kill -9 would not leave
// (runs and manifests are durable when made, the log's lines are in the
// file), so a restart stands for a crash; the cases shape the files as a
// crash at other points would.
type crashRig struct {
	t     *testing.T
	path  string
	clock *testenv.Clock
	s     *FileIdempotency
	want  map[string]string // key: its result, "" while pending
	next  int
}

func newCrashRig(t *testing.T) *crashRig {
	r := &crashRig{t: t, path: filepath.Join(t.TempDir(), "idem.log"), clock: testenv.NewClock(time.Now()), want: map[string]string{}}
	r.open()
	t.Cleanup(func() { r.s.Close() })
	return r
}

func (r *crashRig) open() {
	r.t.Helper()
	s, err := NewFileIdempotency(r.path, r.clock.Now)
	if err != nil {
		r.t.Fatal(err)
	}
	s.mu.Lock()
	s.sealAt, s.compactAt, s.recordBytes = 40, 1<<40, 100
	s.mu.Unlock()
	r.s = s
}

func (r *crashRig) restart() {
	r.t.Helper()
	if err := r.s.Close(); err != nil {
		r.t.Fatal(err)
	}
	r.open()
}

// place makes n placements; every pendingEvery-th stays a claim.
func (r *crashRig) place(n, pendingEvery int) {
	r.t.Helper()
	ctx := context.Background()
	for range n {
		k := fmt.Sprintf("order-%d", r.next)
		r.next++
		if _, claimed, err := r.s.Claim(ctx, k, Record{Deadline: r.clock.Now().Add(time.Minute)}); err != nil || !claimed {
			r.t.Fatalf("claim %s: %v %v", k, claimed, err)
		}
		r.want[k] = ""
		if r.next%pendingEvery != 0 {
			if err := r.s.Complete(ctx, k, placementRecord(k)); err != nil {
				r.t.Fatal(err)
			}
			r.want[k] = k
		}
		r.clock.Advance(time.Second)
	}
}

// compact makes the next placement start a compaction and waits for it.
func (r *crashRig) compact() {
	r.t.Helper()
	r.s.mu.Lock()
	r.s.compactAt, r.s.recordBytes = 1, 0
	r.s.mu.Unlock()
	r.place(1, 1<<30)
	r.waitCompaction()
	r.s.mu.Lock()
	r.s.compactAt, r.s.recordBytes = 1<<40, 100
	r.s.mu.Unlock()
}

func (r *crashRig) waitCompaction() {
	r.s.mu.Lock()
	done := r.s.done
	r.s.mu.Unlock()
	if done != nil {
		<-done
	}
}

func (r *crashRig) check(when string) {
	r.t.Helper()
	for k, w := range r.want {
		rec, ok := r.s.Lookup(k)
		switch {
		case !ok:
			r.t.Fatalf("%s: %s is unknown; want %q", when, k, w)
		case w == "" && !rec.Pending():
			r.t.Fatalf("%s: %s reads %s; want its pending claim", when, k, rec.Result)
		case w != "" && string(rec.Result) != string(placementRecord(w).Result):
			r.t.Fatalf("%s: %s reads %s (pending %v); want %q", when, k, rec.Result, rec.Pending(), w)
		}
	}
	if _, ok := r.s.Lookup("order-none"); ok {
		r.t.Fatalf("%s: an unknown key was found", when)
	}
}

// reused reports whether opening kept the log it found (a rebuild
// replaces it).
func (r *crashRig) reopenReuses() bool {
	r.t.Helper()
	before, err := os.Stat(r.path)
	if err != nil {
		r.t.Fatal(err)
	}
	r.restart()
	after, err := os.Stat(r.path)
	if err != nil {
		r.t.Fatal(err)
	}
	return os.SameFile(before, after)
}

func (r *crashRig) readFile(name string) []byte {
	r.t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

func (r *crashRig) writeFile(name string, b []byte) {
	r.t.Helper()
	if err := os.WriteFile(name, b, 0o600); err != nil {
		r.t.Fatal(err)
	}
}

func (r *crashRig) runFilesMatch(when string) {
	r.t.Helper()
	r.s.mu.Lock()
	runs := len(r.s.runs)
	r.s.mu.Unlock()
	if n := runFileCount(r.t, r.path); n != runs {
		r.t.Fatalf("%s: %d run files for %d runs", when, n, runs)
	}
}

// TestFileIdempotencyReopenReuses: a restart keeps the runs and replays
// only the log past them, and finds every result and every claim that no
// result followed, also claims that runs sealed later records around;
// records expire across restarts as they do running (issue 30).
func TestFileIdempotencyReopenReuses(t *testing.T) {
	r := newCrashRig(t)
	r.place(300, 7)
	firstDone := r.clock.Now()
	r.s.mu.Lock()
	runs := len(r.s.runs)
	r.s.mu.Unlock()
	if runs < 5 {
		t.Fatalf("%d runs; the test needs claims that runs sealed around", runs)
	}
	if !r.reopenReuses() {
		t.Fatal("a clean restart rebuilt the index")
	}
	r.check("after a restart")
	r.s.mu.Lock()
	reused := len(r.s.runs)
	r.s.mu.Unlock()
	if reused != runs {
		t.Fatalf("%d runs after a restart; want the %d there were", reused, runs)
	}
	r.place(100, 5)
	r.compact()
	r.place(100, 3)
	if !r.reopenReuses() {
		t.Fatal("a restart after a compaction rebuilt the index")
	}
	r.check("after a compaction and a restart")
	r.runFilesMatch("after a compaction and a restart")

	// The first 300 expire.
	r.clock.Set(firstDone.Add(IdempotencyTTL - time.Millisecond))
	for i := range 300 {
		delete(r.want, fmt.Sprintf("order-%d", i))
	}
	r.restart()
	r.check("after expiry and a restart")
	for i := range 300 {
		if _, ok := r.s.Lookup(fmt.Sprintf("order-%d", i)); ok {
			t.Fatalf("order-%d outlived its 24 hours", i)
		}
	}
}

// TestFileIdempotencyReopenAfterCrash: whatever a crash leaves, opening
// finds every durable record as it was: it reuses what the manifest names
// when the files still show it, and rebuilds otherwise.
func TestFileIdempotencyReopenAfterCrash(t *testing.T) {
	t.Run("torn last line", func(t *testing.T) {
		r := newCrashRig(t)
		r.place(120, 4)
		r.s.Close()
		f, err := os.OpenFile(r.path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.WriteString(`{"k":"torn","v":{"r":{"orderId"`)
		f.Close()
		r.open()
		r.check("after a torn line")
		if _, ok := r.s.Lookup("torn"); ok {
			t.Fatal("the torn line took effect")
		}
		r.s.mu.Lock()
		r.s.sealAt = 1 << 30 // no manifest holds the claim below
		r.s.mu.Unlock()
		r.place(30, 11) // the first stays a claim: appended to the torn line, it would be lost
		r.restart()
		r.check("after writing past a torn line")
		if _, ok := r.s.Lookup("torn"); ok {
			t.Fatal("the torn line took effect")
		}
	})
	t.Run("runs sealed, manifest not yet written", func(t *testing.T) {
		r := newCrashRig(t)
		r.place(100, 6)
		earlier := r.readFile(manifestPath(r.path))
		r.place(100, 6) // seals more runs and writes a new manifest
		r.s.Close()
		r.writeFile(manifestPath(r.path), earlier)
		r.open()
		r.check("with runs the manifest does not name")
		r.runFilesMatch("with runs the manifest does not name")
		r.place(50, 6)
		r.restart()
		r.check("after more placements")
	})
	t.Run("manifest being written", func(t *testing.T) {
		r := newCrashRig(t)
		r.place(100, 6)
		r.s.Close()
		r.writeFile(manifestPath(r.path)+".tmp", []byte(`{"salt":1,"ru`))
		r.open()
		r.check("with a torn temporary manifest")
	})
	t.Run("garbled manifest", func(t *testing.T) {
		r := newCrashRig(t)
		r.place(100, 6)
		r.s.Close()
		b := r.readFile(manifestPath(r.path))
		r.writeFile(manifestPath(r.path), b[:len(b)/2])
		r.open()
		r.check("with a garbled manifest")
	})
	t.Run("truncated run", func(t *testing.T) {
		r := newCrashRig(t)
		r.place(100, 6)
		r.s.mu.Lock()
		name := r.s.runs[len(r.s.runs)-1].name
		r.s.mu.Unlock()
		r.s.Close()
		b := r.readFile(name)
		r.writeFile(name, b[:len(b)-28])
		if r.open(); r.s.runLen() == 0 {
			t.Fatal("no runs after the rebuild")
		}
		r.check("with a truncated run")
	})
	t.Run("log copied under the manifest", func(t *testing.T) {
		r := newCrashRig(t)
		r.place(100, 6)
		r.s.Close()
		b := r.readFile(r.path)
		if err := os.Remove(r.path); err != nil {
			t.Fatal(err)
		}
		r.writeFile(r.path, b) // the same bytes in another file
		r.open()
		r.check("with the log copied")
	})
	t.Run("rotated, base not written", func(t *testing.T) {
		r := newCrashRig(t)
		r.place(150, 5)
		// The base cannot be written: the compaction fails after rotating.
		if err := os.Mkdir(r.path+".base.tmp", 0o700); err != nil {
			t.Fatal(err)
		}
		r.compact()
		r.place(20, 5)
		if _, err := os.Stat(r.path + ".old"); err != nil {
			t.Fatalf("the rotated log is gone: %v", err)
		}
		r.s.Close()
		if err := os.Remove(r.path + ".base.tmp"); err != nil {
			t.Fatal(err)
		}
		if !r.reopenAfterCrash() {
			t.Fatal("opening rebuilt the index")
		}
		r.check("with the rotated log")
		r.waitCompaction()
		if _, err := os.Stat(r.path + ".old"); !os.IsNotExist(err) {
			t.Fatalf("the rotated log is still there after the compaction at open: %v", err)
		}
		r.check("after the compaction at open")
		r.restart()
		r.check("after a restart")
		r.runFilesMatch("after a restart")
	})
	for _, compacted := range []bool{false, true} {
		name := map[bool]string{false: "base written, manifest not yet (first base)", true: "base written, manifest not yet"}[compacted]
		t.Run(name, func(t *testing.T) {
			r := newCrashRig(t)
			r.place(120, 5)
			if compacted {
				r.compact() // the manifest names a base run
				r.place(60, 5)
			}
			earlier := r.readFile(manifestPath(r.path))
			if err := os.Link(r.path, r.path+".keep"); err != nil { // the log the rotation renames
				t.Fatal(err)
			}
			r.compact()
			r.place(20, 5)
			r.s.Close()
			if err := os.Rename(r.path+".keep", r.path+".old"); err != nil {
				t.Fatal(err)
			}
			r.writeFile(manifestPath(r.path), earlier)
			r.open()
			r.check("with the earlier manifest")
			r.waitCompaction()
			r.restart()
			r.check("after a restart")
			r.runFilesMatch("after a restart")
		})
	}
	t.Run("manifest written, rotated log not removed", func(t *testing.T) {
		r := newCrashRig(t)
		r.place(120, 5)
		if err := os.Link(r.path, r.path+".keep"); err != nil {
			t.Fatal(err)
		}
		r.compact()
		r.place(20, 5)
		r.s.Close()
		if err := os.Rename(r.path+".keep", r.path+".old"); err != nil {
			t.Fatal(err)
		}
		if !r.reopenAfterCrash() {
			t.Fatal("opening rebuilt the index")
		}
		r.check("with the rotated log left")
		if _, err := os.Stat(r.path + ".old"); !os.IsNotExist(err) {
			t.Fatalf("the rotated log is still there: %v", err)
		}
	})
}

// reopenAfterCrash opens the closed store and reports whether it kept the
// log it found.
func (r *crashRig) reopenAfterCrash() bool {
	r.t.Helper()
	before, err := os.Stat(r.path)
	if err != nil {
		r.t.Fatal(err)
	}
	r.open()
	after, err := os.Stat(r.path)
	if err != nil {
		r.t.Fatal(err)
	}
	return os.SameFile(before, after)
}

// TestFileMark: a mark matches its file while the bytes it covers stay,
// however much is appended, and neither another file with the same bytes
// nor the same file with other bytes.
func TestFileMark(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "log")
	if err := os.WriteFile(name, []byte("0123456789abcdef"), 0o600); err != nil {
		t.Fatal(err)
	}
	seg, err := openSegment(name)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.close()
	m, err := markOf(seg, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !m.matches(seg) {
		t.Fatal("a mark does not match its own file")
	}
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("more"), 16); err != nil || !m.matches(seg) {
		t.Fatalf("a mark does not match its file appended to (%v)", err)
	}
	if _, err := f.WriteAt([]byte("X"), 9); err != nil || m.matches(seg) {
		t.Fatalf("a mark matches its file with a byte it covers changed (%v)", err)
	}
	other := filepath.Join(dir, "copy")
	if err := os.WriteFile(other, []byte("0123456789abcdef"), 0o600); err != nil {
		t.Fatal(err)
	}
	copied, err := openSegment(other)
	if err != nil {
		t.Fatal(err)
	}
	defer copied.close()
	if m.matches(copied) {
		t.Fatal("a mark matches another file with the same bytes")
	}
}
