package connector

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/perpgate/perpgate/pkg/appendlog"
)

// FileIdempotency is the standalone IdempotencyStore: the in-process store
// plus an append-only log in the data directory, on disk before anyone
// hears of a change, so `perpgate serve` keeps its 24 h promise across
// restarts. Concurrent changes share fsyncs (appendlog).
//
// The log is compacted while the store runs, once it has grown well past
// what its live records take: the log is rotated to path.old (a moment
// under the store's lock), the live records are written to path.base in
// the background, and path.old is removed. Opening replays path.base,
// path.old and path, in that order (a crash may leave any of them), and
// compacts the same way at once.
type FileIdempotency struct {
	*MemoryIdempotency
	log  *appendlog.File
	path string
	// Under the store's lock: bytes appended since the last compaction,
	// and whether one is running (done is closed when it ends).
	logBytes   int64
	compacting bool
	done       chan struct{}
	// compactAt is the least log size that starts a compaction, and
	// recordBytes the size of a live record's line it assumes.
	compactAt, recordBytes int64
}

// compactMinBytes is the least log size worth compacting; beyond it the
// log is compacted once it is four times the live records' size (a
// placement's completed record is about 400 bytes).
const compactMinBytes = 64 << 20

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
	for _, p := range []string{path + ".base", path + ".old", path} {
		if err := replay(p, mem); err != nil {
			return nil, err
		}
	}
	s := &FileIdempotency{MemoryIdempotency: mem, path: path, compactAt: compactMinBytes, recordBytes: 400}
	// The live records become the base; then the logs they came from go.
	if err := writeBase(path+".base", mem.entries); err != nil {
		return nil, err
	}
	for _, p := range []string{path + ".old", path} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("idempotency log: %w", err)
		}
	}
	log, err := appendlog.Open(path)
	if err != nil {
		return nil, fmt.Errorf("idempotency log: %w", err)
	}
	s.log = log
	mem.persist, mem.durable, mem.changed = s.append, s.sync, s.maybeCompact
	return s, nil
}

// writeBase writes entries to path through a temporary file and a rename,
// so path holds either its old content or all of the new.
func writeBase(path string, entries map[string]memEntry) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("idempotency log: %w", err)
	}
	w := bufio.NewWriter(f)
	for k, e := range entries {
		line, _ := json.Marshal(logLine{Key: k, Record: &e.rec, Expires: e.expires})
		_, _ = w.Write(append(line, '\n'))
	}
	if err = w.Flush(); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("idempotency log: %w", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync() // the rename itself must survive a crash
		d.Close()
	}
	return nil
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
	s.logBytes += int64(len(line) + 1)
	return pos, nil
}

// maybeCompact starts a compaction once the log has grown past
// compactAt and four times the live records' size (a record's line is
// recordBytes); it runs under the store's lock after a change took
// effect, so the records it copies are what the rotated log amounts to.
func (s *FileIdempotency) maybeCompact() {
	if s.compacting || s.logBytes < max(s.compactAt, 4*s.recordBytes*int64(len(s.entries))) {
		return
	}
	if err := s.log.Rotate(s.path + ".old"); err != nil {
		return // the log goes on as it was; the next change tries again
	}
	live := make(map[string]memEntry, len(s.entries))
	for k, e := range s.entries {
		live[k] = memEntry{rec: e.rec, expires: e.expires}
	}
	s.logBytes, s.compacting, s.done = 0, true, make(chan struct{})
	go s.compact(live, s.done)
}

// compact writes the live records as the new base and removes the
// rotated log they superseded. On failure both stay, and this process
// compacts no more (a second rotation would overwrite path.old): opening
// replays them and compacts.
func (s *FileIdempotency) compact(live map[string]memEntry, done chan struct{}) {
	defer close(done)
	if err := writeBase(s.path+".base", live); err != nil {
		return
	}
	_ = os.Remove(s.path + ".old")
	s.mu.Lock()
	s.compacting = false
	s.mu.Unlock()
}

// sync waits until the log holds every change up to pos on disk.
func (s *FileIdempotency) sync(pos uint64) error {
	if err := s.log.Sync(pos); err != nil {
		return fmt.Errorf("idempotency log: %w", err)
	}
	return nil
}

// Close waits for a running compaction and closes the log.
func (s *FileIdempotency) Close() error {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done != nil {
		<-done
	}
	return s.log.Close()
}
