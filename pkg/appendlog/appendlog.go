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
package appendlog

import (
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

// Write appends line and a newline, and returns the position Sync takes.
// The record is in the file but not yet durable.
func (l *File) Write(line []byte) (pos uint64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, l.err
	}
	// One write call per record, so a crash tears at most the last line.
	rec := make([]byte, 0, len(line)+1)
	if _, err := l.f.Write(append(append(rec, line...), '\n')); err != nil {
		l.err = fmt.Errorf("write %s: %w", l.name, err)
		return 0, l.err
	}
	l.written++
	return l.written, nil
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
	f, err := os.OpenFile(l.name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		l.err = fmt.Errorf("rotate %s: %w", l.name, err)
		return l.err
	}
	_ = SyncDir(l.name)
	old := l.f
	l.f, l.fsync = f, f.Sync
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
	l.err = ErrClosed
	l.synced.Broadcast()
	return l.f.Close()
}
