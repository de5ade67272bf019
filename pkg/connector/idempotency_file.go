package connector

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/perpgate/perpgate/pkg/appendlog"
)

// FileIdempotency is the standalone IdempotencyStore: the in-process store
// plus an append-only log in the data directory, on disk before anyone
// hears of a change, so `perpgate serve` keeps its 24 h promise across
// restarts. Concurrent changes share fsyncs (appendlog). Opening replays
// the log and rewrites it with the live records.
type FileIdempotency struct {
	*MemoryIdempotency
	log *appendlog.File
}

// logLine is one change of the log; a nil record is a removal.
type logLine struct {
	Key     string    `json:"k"`
	Record  *Record   `json:"v,omitempty"`
	Expires time.Time `json:"e,omitzero"`
}

// NewFileIdempotency opens (or creates, mode 0600) the log at path; now
// may be nil.
func NewFileIdempotency(path string, now func() time.Time) (*FileIdempotency, error) {
	mem := NewMemoryIdempotency(now)
	if err := replay(path, mem); err != nil {
		return nil, err
	}
	// Rewrite the live records into a fresh log, then swap it in.
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("idempotency log: %w", err)
	}
	w := bufio.NewWriter(f)
	for k, e := range mem.entries {
		line, _ := json.Marshal(logLine{Key: k, Record: &e.rec, Expires: e.expires})
		w.Write(append(line, '\n'))
	}
	if err := w.Flush(); err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("idempotency log: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		f.Close()
		return nil, fmt.Errorf("idempotency log: %w", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync() // the rename itself must survive a crash
		d.Close()
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("idempotency log: %w", err)
	}
	log, err := appendlog.Open(path)
	if err != nil {
		return nil, fmt.Errorf("idempotency log: %w", err)
	}
	s := &FileIdempotency{MemoryIdempotency: mem, log: log}
	mem.persist, mem.durable = s.append, s.sync
	return s, nil
}

func replay(path string, mem *MemoryIdempotency) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("idempotency log: %w", err)
	}
	defer f.Close()
	now := mem.now()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var l logLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue // a line torn by a crash mid-write: its change never took effect
		}
		if l.Record == nil || !now.Before(l.Expires) {
			delete(mem.entries, l.Key)
			continue
		}
		mem.entries[l.Key] = memEntry{rec: *l.Record, expires: l.Expires}
	}
	return sc.Err()
}

// append writes one change to the log; it runs under the store's lock.
func (s *FileIdempotency) append(key string, rec *Record, expires time.Time) (uint64, error) {
	line, err := json.Marshal(logLine{Key: key, Record: rec, Expires: expires})
	if err != nil {
		return 0, err
	}
	pos, err := s.log.Write(line)
	if err != nil {
		return 0, fmt.Errorf("idempotency log: %w", err)
	}
	return pos, nil
}

// sync waits until the log holds every change up to pos on disk.
func (s *FileIdempotency) sync(pos uint64) error {
	if err := s.log.Sync(pos); err != nil {
		return fmt.Errorf("idempotency log: %w", err)
	}
	return nil
}

// Close closes the log.
func (s *FileIdempotency) Close() error { return s.log.Close() }
