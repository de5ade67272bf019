// Package appendlog is an append-only file of records made durable by
// group commit: appends that wait for the disk at the same time share one
// fsync instead of queueing for one each.
//
// A writer that must order its records with its own state (a store's
// lock) writes under that lock and syncs after releasing it, so that
// concurrent writers' syncs can overlap:
//
//	mu.Lock()
//	pos, err := log.Write(line)
//	// ... apply the change ...
//	mu.Unlock()
//	err = log.Sync(pos) // the change is durable once this returns nil
//
// Records reach the file in Write order and an fsync covers every record
// written before it began, so what survives a crash is always a prefix of
// the records, never one without an earlier one.
//
// A log opened with OpenPreallocated keeps zeroed space allocated past its
// records, so that a sync writes the records alone, not the file's new
// length as well (on ext4 here, 0.10 ms instead of 0.17). Its readers stop at the
// first zero byte (Records).
package appendlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// File is one log file. Its methods are safe for concurrent use.
type File struct {
	mu      sync.Mutex
	synced  *sync.Cond // broadcast when an fsync ends
	f       *os.File
	name    string
	written uint64 // records written to the file
	durable uint64 // records an fsync has covered
	syncing bool
	linger  time.Duration // SetLinger
	fsync   func() error  // f.Sync; tests count and fail it
	// A preallocated log (OpenPreallocated) writes at end, inside the
	// space allocated up to alloc, grown chunk bytes at a time.
	prealloc   bool
	end, alloc int64
	chunk      int64
	// err is sticky: after a write or an fsync failed, what reached the
	// disk is unknown (a failed fsync may have dropped the dirty pages),
	// so the log refuses everything after it.
	err error
}

// ErrClosed is returned by a File after Close.
var ErrClosed = errors.New("appendlog: file closed")

// Open opens (or creates, mode 0600) the log at path for appending.
func Open(path string) (*File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	l := &File{f: f, name: path, fsync: f.Sync}
	l.synced = sync.NewCond(&l.mu)
	return l, nil
}

// OpenPreallocated opens (or creates, mode 0600) the log at path like
// Open, and keeps at least chunk bytes of zeroed space allocated past its
// records: a sync then needs no change of the file's length, only the
// records (fdatasync where there is one). The file must hold whole records
// only, as a reader leaves it after cutting a torn tail; zero bytes past
// the last record (a crash after an allocation) are written over. Close
// and Rotate cut the space off again. Off Linux the log appends and
// fsyncs as Open's does (allocate_other.go).
func OpenPreallocated(path string, chunk int64) (*File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	end, err := recordsEnd(f)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	l := &File{f: f, name: path, prealloc: true, end: end, alloc: end, chunk: chunk, fsync: dataSyncOf(f)}
	l.synced = sync.NewCond(&l.mu)
	return l, nil
}

// Length is the length of the file at path without the zero bytes at its
// end: for a preallocated log, what its records take.
func Length(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return recordsEnd(f)
}

// recordsEnd is the length of f without the zero bytes at its end.
func recordsEnd(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 4<<10) // most files end in a record: one read
	for end := st.Size(); end > 0; buf = make([]byte, 64<<10) {
		n := min(end, int64(len(buf)))
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexFunc(buf[:n], func(r rune) bool { return r != 0 }); i >= 0 {
			return end - n + int64(i) + 1, nil
		}
		end -= n
	}
	return 0, nil
}

// Records returns the records of a preallocated log's content: data up to
// its first zero byte. A record never holds one (JSON escapes it), so a
// zero is allocated space not yet written, or a record a crash tore.
func Records(data []byte) []byte {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return data[:i]
	}
	return data
}

// Write appends line and a newline, and returns the position Sync takes.
// The record is in the file but not yet durable.
func (l *File) Write(line []byte) (pos uint64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, l.err
	}
	// One write call per record, so a crash tears at most the last line.
	rec := append(append(make([]byte, 0, len(line)+1), line...), '\n')
	if l.prealloc {
		err = l.writeAtEnd(rec)
	} else {
		_, err = l.f.Write(rec)
	}
	if err != nil {
		l.err = fmt.Errorf("write %s: %w", l.name, err)
		return 0, l.err
	}
	l.written++
	return l.written, nil
}

// writeAtEnd writes rec after the last record, first allocating another
// chunk when rec does not fit in the space left. Called with mu held.
func (l *File) writeAtEnd(rec []byte) error {
	if need := l.end + int64(len(rec)); need > l.alloc && l.chunk > 0 {
		// On failure the write goes ahead without it, and reports its
		// own error if the disk is full.
		size := need + l.chunk
		switch err := allocate(l.f, l.alloc, size-l.alloc); {
		case err == nil:
			l.alloc = size
		case errors.Is(err, errCannotAllocate):
			l.chunk = 0 // the file grows with each record instead
		}
	}
	if _, err := l.f.WriteAt(rec, l.end); err != nil {
		return err
	}
	l.end += int64(len(rec))
	l.alloc = max(l.alloc, l.end)
	return nil
}

// cutAllocation drops the space allocated past the last record. Called
// with mu held.
func (l *File) cutAllocation() error {
	if !l.prealloc || l.alloc == l.end {
		return nil
	}
	if err := l.f.Truncate(l.end); err != nil {
		return err
	}
	l.alloc = l.end
	return nil
}

// Sync returns when every record up to pos is on disk. A caller that finds
// no fsync running starts one covering all records written so far; the
// others wait for it, and for the next one if theirs came too late.
func (l *File) Sync(pos uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.durable < pos {
		if l.err != nil {
			return l.err
		}
		if l.syncing {
			l.synced.Wait()
			continue
		}
		l.syncing = true
		if l.linger > 0 {
			l.mu.Unlock()
			time.Sleep(l.linger)
			l.mu.Lock()
		}
		upTo := l.written
		l.mu.Unlock()
		err := l.fsync()
		l.mu.Lock()
		l.syncing = false
		if err != nil {
			if l.err == nil {
				l.err = fmt.Errorf("sync %s: %w", l.name, err)
			}
		} else {
			l.durable = upTo
		}
		l.synced.Broadcast()
	}
	return nil
}

// SetLinger makes each fsync start d after the first Sync that needs it,
// so that the records written meanwhile share it. It is for logs whose
// writers do not keep anyone waiting for an answer (an audit trail): their
// fsyncs then seldom compete for the disk with those of logs that do.
func (l *File) SetLinger(d time.Duration) {
	l.mu.Lock()
	l.linger = d
	l.mu.Unlock()
}

// Rotate makes every record written so far durable, renames the file to
// oldPath and goes on appending to a new, empty file under the original
// name. Positions go on where they were, so a Sync for an earlier record
// returns at once. Writers wait meanwhile (one fsync). A compactor then
// writes what the old file's records amount to and removes it.
func (l *File) Rotate(oldPath string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.syncing {
		l.synced.Wait()
	}
	if l.err != nil {
		return l.err
	}
	if err := l.cutAllocation(); err != nil {
		l.err = fmt.Errorf("rotate %s: %w", l.name, err)
		return l.err
	}
	if err := l.fsync(); err != nil {
		l.err = fmt.Errorf("sync %s: %w", l.name, err)
		return l.err
	}
	l.durable = l.written
	// A failed rotation is sticky like a failed fsync: the caller may
	// already have written what supersedes the records, so appending to
	// either file could put records where they would not be replayed.
	if err := os.Rename(l.name, oldPath); err != nil {
		l.err = fmt.Errorf("rotate %s: %w", l.name, err)
		return l.err
	}
	flag := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if l.prealloc {
		flag = os.O_CREATE | os.O_RDWR | os.O_TRUNC
	}
	f, err := os.OpenFile(l.name, flag, 0o600)
	if err != nil {
		l.err = fmt.Errorf("rotate %s: %w", l.name, err)
		return l.err
	}
	_ = SyncDir(l.name)
	old := l.f
	l.f, l.end, l.alloc = f, 0, 0
	if l.prealloc {
		l.fsync = dataSyncOf(f)
	} else {
		l.fsync = f.Sync
	}
	_ = old.Close()
	return nil
}

// SyncDir makes a rename or removal in path's directory durable.
func SyncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WriteFile replaces path with data through a synced temporary file and a
// rename, so path holds either its old content or all of data, durably.
func WriteFile(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return SyncDir(path)
}

// Append writes line and waits until it is durable.
func (l *File) Append(line []byte) error {
	pos, err := l.Write(line)
	if err != nil {
		return err
	}
	return l.Sync(pos)
}

// Close closes the file; later calls fail with ErrClosed. Records written
// but not synced are left to the operating system.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.syncing {
		l.synced.Wait()
	}
	if errors.Is(l.err, ErrClosed) {
		return nil
	}
	// After a failed write the space past end may hold part of a record;
	// cut either way, so the file ends at its last whole record written.
	cerr := l.cutAllocation()
	l.err = ErrClosed
	l.synced.Broadcast()
	return errors.Join(cerr, l.f.Close())
}
