package appendlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestConcurrentAppendsShareFsyncs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	const writers = 32
	var fsyncs atomic.Int32
	allWritten := make(chan struct{})
	orig := l.fsync
	l.fsync = func() error {
		// The first fsync lasts until every writer has written: all of
		// them then wait together, and one more fsync must cover them all.
		if fsyncs.Add(1) == 1 {
			<-allWritten
		}
		return orig()
	}
	var wg, wrote sync.WaitGroup
	wrote.Add(writers)
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pos, err := l.Write(fmt.Appendf(nil, `{"n":%d}`, i))
			wrote.Done()
			if err == nil {
				err = l.Sync(pos)
			}
			errs <- err
		}()
	}
	wrote.Wait()
	close(allWritten)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := fsyncs.Load(); n > 2 {
		t.Errorf("%d appends took %d fsyncs; want at most 2", writers, n)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	got := make([]string, len(lines))
	for i, ln := range lines {
		got[i] = string(ln)
	}
	sort.Strings(got)
	want := make([]string, writers)
	for i := range writers {
		want[i] = fmt.Sprintf(`{"n":%d}`, i)
	}
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("file holds %q; want each record once: %q", got, want)
	}
}

func TestSyncWaitsForAnFsyncStartedAfterTheWrite(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// An fsync is running when the second record is written: it does not
	// cover that record, so the second Sync must run one of its own.
	var covered []uint64
	inFirst, releaseFirst := make(chan struct{}), make(chan struct{})
	orig := l.fsync
	l.fsync = func() error {
		l.mu.Lock()
		covered = append(covered, l.written)
		l.mu.Unlock()
		if len(covered) == 1 {
			close(inFirst)
			<-releaseFirst
		}
		return orig()
	}
	first := make(chan error)
	go func() { first <- l.Append([]byte("one")) }()
	<-inFirst
	pos, err := l.Write([]byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	second := make(chan error)
	go func() { second <- l.Sync(pos) }()
	close(releaseFirst)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if len(covered) != 2 || covered[1] != 2 {
		t.Errorf("fsyncs began with %v records written; want [1 2]", covered)
	}
}

func TestFailedFsyncIsSticky(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	disk := errors.New("input/output error")
	l.fsync = func() error { return disk }
	if err := l.Append([]byte("one")); !errors.Is(err, disk) {
		t.Fatalf("Append = %v; want the fsync error", err)
	}
	// What reached the disk is unknown now: nothing more is accepted,
	// even once the disk answers again.
	l.fsync = func() error { return nil }
	if _, err := l.Write([]byte("two")); !errors.Is(err, disk) {
		t.Fatalf("Write after a failed fsync = %v; want the fsync error", err)
	}
}

func TestClosed(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append([]byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append([]byte("two")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close = %v; want ErrClosed", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
}

// TestLingerSharesOneFsync: with a linger, appends that come one after
// another within it, none waiting for another's fsync, share one fsync.
func TestLingerSharesOneFsync(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var fsyncs atomic.Int32
	orig := l.fsync
	l.fsync = func() error { fsyncs.Add(1); return orig() }
	l.SetLinger(time.Second)
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 20 * time.Millisecond)
			if err := l.Append(fmt.Appendf(nil, `{"n":%d}`, i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := fsyncs.Load(); n != 1 {
		t.Fatalf("%d fsyncs for 5 appends within the linger, want 1", n)
	}
}

// TestPreallocatedLog: a preallocated log writes its records inside space
// allocated ahead, goes on after the last record when reopened over the
// zeros a crash leaves, and ends at its last record after Close and
// Rotate.
func TestPreallocatedLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log")
	l, err := OpenPreallocated(path, 4096)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i := range 3 {
		rec := fmt.Appendf(nil, `{"n":%d}`, i)
		if err := l.Append(rec); err != nil {
			t.Fatal(err)
		}
		want = append(append(want, rec...), '\n')
	}
	// A crash now leaves the file as it is: the records, then zeros.
	crashed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && len(crashed) <= len(want) {
		t.Fatalf("the file holds %d bytes with %d of records: nothing allocated ahead", len(crashed), len(want))
	}
	if got := Records(crashed); !bytes.Equal(got, want) {
		t.Fatalf("Records of the open file = %q, want %q", got, want)
	}
	if n, err := Length(path); err != nil || n != int64(len(want)) {
		t.Fatalf("Length of the open file = %d, %v; want the %d bytes of the records", n, err, len(want))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Fatalf("after Close the file holds %d bytes (%d zeros), want the %d bytes of the records", len(got), bytes.Count(got, []byte{0}), len(want))
	}

	if err := os.WriteFile(path, crashed, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err = OpenPreallocated(path, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append([]byte(`{"n":3}`)); err != nil {
		t.Fatal(err)
	}
	want = append(want, `{"n":3}`+"\n"...)
	if got, _ := os.ReadFile(path); !bytes.Equal(Records(got), want) {
		t.Fatalf("after reopening over the zeros the records are %q, want %q", Records(got), want)
	}
	if err := l.Rotate(path + ".old"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path + ".old"); !bytes.Equal(got, want) {
		t.Fatalf("the rotated file holds %d bytes (%d zeros), want the %d bytes of the records", len(got), bytes.Count(got, []byte{0}), len(want))
	}
	if err := l.Append([]byte(`{"n":4}`)); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != `{"n":4}`+"\n" {
		t.Fatalf("the new file holds %d bytes (%d zeros), want one record", len(got), bytes.Count(got, []byte{0}))
	}
}

// TestPreallocatedLogGrows: records beyond the first allocation get more
// space, and none is lost or overwritten.
func TestPreallocatedLogGrows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	l, err := OpenPreallocated(path, 64)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i := range 200 {
		rec := fmt.Appendf(nil, `{"n":%d,"pad":"%s"}`, i, bytes.Repeat([]byte("x"), i%50))
		pos, err := l.Write(rec)
		if err != nil {
			t.Fatal(err)
		}
		if i%7 == 0 {
			if err := l.Sync(pos); err != nil {
				t.Fatal(err)
			}
		}
		want = append(append(want, rec...), '\n')
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Fatalf("the file holds %d bytes, want the %d bytes of the records", len(got), len(want))
	}
}
