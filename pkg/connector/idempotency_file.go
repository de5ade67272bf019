package connector

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
// the background, and path.old is removed. Opening reuses the runs and
// replays the log past what they cover when the manifest says it may
// (idempotency_manifest.go); otherwise it replays path.base, path.old
// and path, in that order (a crash may leave any of them), and writes
// the base and its run at once.
//
// Completed records are kept on disk, not in memory: an entry holds where
// its line is (a segment: the log, the rotated log, the base) and a
// repeat reads it from there. A compaction moves them into the new base.
type FileIdempotency struct {
	*MemoryIdempotency
	log  *appendlog.File
	path string
	// Under the store's lock: the log's segment and the bytes in it, and
	// the segments a running compaction will retire (the base and the
	// rotated log).
	cur     *segment
	curOff  int64
	base    *segment
	retired []*segment
	// Under the store's lock: bytes appended since the last compaction,
	// and whether one is running (done is closed when it ends).
	logBytes   int64
	compacting bool
	done       chan struct{}
	// compactAt is the least log size that starts a compaction, and
	// recordBytes the size of a live record's line it assumes.
	compactAt, recordBytes int64
	// runFiles names the runs settled records are sealed into, once
	// onDisk holds sealAt of them.
	runFiles runFiles
	sealAt   int
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

// baseItem is a live record on its way into a new base: by key from
// entries, or by hash from onDisk; moved is where writeBase put it.
type baseItem struct {
	key   string
	hash  uint64
	e     memEntry
	moved diskRef
	// fromRun: the item was in a run (key is then empty too).
	fromRun bool
}

// settled reports whether the item is a result (a claim has no line on
// disk and no result).
func (it baseItem) settled() bool { return it.e.ref.seg != nil || !it.e.rec.Pending() }

// items lists the live records, for a new base; under mu.
func (s *MemoryIdempotency) items() []baseItem {
	items := make([]baseItem, 0, s.live())
	for k, e := range s.entries {
		items = append(items, baseItem{key: k, e: memEntry{rec: e.rec, ref: e.ref, expires: e.expires}})
	}
	for h, d := range s.onDisk {
		items = append(items, baseItem{hash: h, e: memEntry{ref: d.ref, expires: time.Unix(0, d.expires)}})
	}
	return s.runItems(items)
}

// writeBase writes items to path through a temporary file and a rename,
// so path holds either its old content or all of the new, and sets each
// item's moved. It returns the new base as a segment.
func writeBase(path string, items []baseItem) (*segment, error) {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("idempotency log: %w", err)
	}
	seg := &segment{f: f}
	w := bufio.NewWriter(f)
	var off int64
	for i := range items {
		it := &items[i]
		var line []byte
		if it.e.ref.seg != nil {
			line, err = it.e.ref.seg.raw(it.e.ref.off, it.e.ref.n) // already the line, key and expiry included
		} else {
			line, err = json.Marshal(logLine{Key: it.key, Record: &it.e.rec, Expires: it.e.expires})
		}
		if err != nil {
			break
		}
		_, _ = w.Write(append(line, '\n'))
		it.moved = diskRef{seg: seg, off: off, n: int32(len(line))}
		off += int64(len(line) + 1)
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("idempotency log: %w", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync() // the rename itself must survive a crash
		d.Close()
	}
	return seg, nil
}

// segment is a file of the log read by position: the file stays open
// while entries point into it, through renames and removal.
type segment struct{ f *os.File }

func openSegment(path string) (*segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("idempotency log: %w", err)
	}
	return &segment{f: f}, nil
}

// raw returns the line n bytes long at off.
func (g *segment) raw(off int64, n int32) ([]byte, error) {
	buf := make([]byte, n)
	if _, err := g.f.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("idempotency log: read record: %w", err)
	}
	return buf, nil
}

// readLine returns the key and record of the line n bytes long at off.
func (g *segment) readLine(off int64, n int32) (string, Record, error) {
	buf, err := g.raw(off, n)
	if err != nil {
		return "", Record{}, err
	}
	var l logLine
	if err := json.Unmarshal(buf, &l); err != nil || l.Record == nil {
		return "", Record{}, fmt.Errorf("idempotency log: record at %d is unreadable: %v", off, err)
	}
	return l.Key, *l.Record, nil
}

func (g *segment) close() {
	if g != nil {
		_ = g.f.Close()
	}
}

// replay reads the log file at path into mem (replaySegment); it returns
// the file as a segment, nil without a file.
func replay(path string, mem *MemoryIdempotency, claims map[string]memEntry) (*segment, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("idempotency log: %w", err)
	}
	seg := &segment{f: f}
	if _, err := replaySegment(seg, 0, mem, claims); err != nil {
		f.Close()
		return nil, err
	}
	return seg, nil
}

// replaySegment reads seg's lines from offset from into mem: a completed
// record as where its line is, so opening neither decodes nor encodes it
// whole; a claim likewise into claims, decoded once the files are read if
// no result followed it. It returns where the last whole line ends.
func replaySegment(seg *segment, from int64, mem *MemoryIdempotency, claims map[string]memEntry) (int64, error) {
	fi, err := seg.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("idempotency log: %w", err)
	}
	size := fi.Size()
	now := mem.now()
	sc := bufio.NewScanner(bufio.NewReaderSize(io.NewSectionReader(seg.f, from, size-from), 1<<20))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	off, end := from, from
	for sc.Scan() {
		b := sc.Bytes()
		at := off
		off += int64(len(b)) + 1
		if off > size {
			break // no newline: torn by a crash mid-write, so never durable
		}
		end = off
		l, ok := scanLine(b)
		if !ok {
			continue // a line torn by a crash mid-write: its change never took effect
		}
		delete(mem.entries, l.Key)
		delete(claims, l.Key)
		if l.Record == nil || !now.Before(l.Expires) {
			continue
		}
		e := memEntry{ref: diskRef{seg: seg, off: at, n: int32(len(b))}, expires: l.Expires}
		if bytes.HasPrefix(l.Record, []byte(`{"r":`)) { // a result: Record's first field
			mem.entries[l.Key] = e
		} else {
			claims[l.Key] = e // decoded at the end, if no result follows
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("idempotency log: %w", err)
	}
	return end, nil
}

// rawLine is a log line with its record left encoded.
type rawLine struct {
	Key     string          `json:"k"`
	Record  json.RawMessage `json:"v"`
	Expires time.Time       `json:"e"`
}

// scanLine reads a log line. Lines as append writes them are cut at their
// fields, for a restart reads hundreds of thousands; any other (a key
// json.Marshal escaped) is decoded.
func scanLine(b []byte) (rawLine, bool) {
	const keyAt, recAt, expAt = `{"k":"`, `","v":`, `,"e":"`
	var l rawLine
	if rest, ok := bytes.CutPrefix(b, []byte(keyAt)); ok {
		if end := bytes.IndexByte(rest, '"'); end >= 0 && bytes.IndexByte(rest[:end], '\\') < 0 {
			l.Key = string(rest[:end])
			rest = rest[end:]
			if string(rest) == `"}` { // a removal
				return l, true
			}
			e := bytes.LastIndex(rest, []byte(expAt))
			if bytes.HasPrefix(rest, []byte(recAt)) && e > len(recAt) && bytes.HasSuffix(rest, []byte(`"}`)) {
				t, err := time.Parse(time.RFC3339Nano, string(rest[e+len(expAt):len(rest)-2]))
				if err == nil {
					l.Record, l.Expires = rest[len(recAt):e], t
					return l, true
				}
			}
		}
	}
	l = rawLine{}
	return l, json.Unmarshal(b, &l) == nil
}

// append writes one change to the log and returns where its line is; it
// runs under the store's lock.
func (s *FileIdempotency) append(key string, rec *Record, expires time.Time) (uint64, diskRef, error) {
	line, err := json.Marshal(logLine{Key: key, Record: rec, Expires: expires})
	if err != nil {
		return 0, diskRef{}, err
	}
	pos, err := s.log.Write(line)
	if err != nil {
		return 0, diskRef{}, fmt.Errorf("idempotency log: %w", err)
	}
	s.line = line
	ref := diskRef{seg: s.cur, off: s.curOff, n: int32(len(line))}
	s.curOff += int64(len(line) + 1)
	s.logBytes += int64(len(line) + 1)
	return pos, ref, nil
}

// maybeCompact starts a compaction once the log has grown past
// compactAt and four times the live records' size (a record's line is
// recordBytes); it runs under the store's lock after a change took
// effect, so the records it copies are what the rotated log amounts to.
func (s *FileIdempotency) maybeCompact() {
	if s.compacting || s.logBytes < max(s.compactAt, 4*s.recordBytes*int64(s.live())) {
		return
	}
	if err := s.log.Rotate(s.path + ".old"); err != nil {
		return // the log goes on as it was; the next change tries again
	}
	cur, err := openSegment(s.path)
	if err != nil {
		return // the log goes on; entries point into the rotated file, which stays open
	}
	s.retired = []*segment{s.base, s.cur}
	s.cur, s.curOff = cur, 0
	s.logBytes, s.compacting, s.done = 0, true, make(chan struct{})
	go s.compact(s.items(), s.done)
}

// compact writes the live records as the new base, with a run over its
// settled ones, and removes the rotated log they superseded. On failure
// both stay, and this process compacts no more (a second rotation would
// overwrite path.old): opening replays them and compacts.
func (s *FileIdempotency) compact(items []baseItem, done chan struct{}) {
	defer close(done)
	base, err := writeBase(s.path+".base", items)
	if err != nil {
		return
	}
	run, err := baseRun(&s.runFiles, base, items, s.hash)
	if err != nil {
		base.close()
		return
	}
	s.mu.Lock()
	// The runs' records are all in the new base now (none is sealed while
	// a compaction runs), indexed by one run.
	superseded := s.runs
	s.runs = nil
	if run != nil {
		s.runs = []*diskRun{run}
	}
	s.moveToBase(items)
	// What the log held before its rotation is in the base and its run
	// now; the rest is in the log.
	s.saveManifest(0)
	for _, r := range superseded {
		_ = r.run.Remove()
	}
	for _, g := range s.retired {
		g.close()
	}
	s.base, s.retired, s.compacting = base, nil, false
	s.mu.Unlock()
	_ = os.Remove(s.path + ".old")
}

// moveToBase drops the records still where they were when copied: the
// base's run holds them now. One whose settle is not done stays in memory,
// moved, for Complete to find; any other record changed since and is in
// the log. Under mu.
func (s *FileIdempotency) moveToBase(items []baseItem) {
	for _, it := range items {
		if it.e.ref.seg == nil || it.fromRun {
			continue
		}
		if it.key == "" {
			if d, ok := s.onDisk[it.hash]; ok && d.ref == it.e.ref {
				delete(s.onDisk, it.hash)
			}
			continue
		}
		e, ok := s.entries[it.key]
		switch {
		case !ok || e.ref != it.e.ref:
		case e.settle != nil:
			e.ref = it.moved
			s.entries[it.key] = e
		default:
			delete(s.entries, it.key)
		}
	}
}

// sync waits until the log holds every change up to pos on disk.
func (s *FileIdempotency) sync(pos uint64) error {
	if err := s.log.Sync(pos); err != nil {
		return fmt.Errorf("idempotency log: %w", err)
	}
	return nil
}

// SyncAll waits until every change written so far is on disk.
func (s *FileIdempotency) SyncAll() error {
	s.mu.Lock()
	pos := s.last
	s.mu.Unlock()
	return s.sync(pos)
}

// Recover applies the log lines a venue's journal kept for this store
// (the claims and results it recorded with their orders: Barrier.Hold),
// oldest first, where this log lacks them: a key it does not hold gets
// the line's record, a pending claim the line's result. A crash may have
// left the journal durable without this log, which is not waited for on
// that path. Lines past their expiry are skipped. It returns once what it
// applied is durable.
func (s *FileIdempotency) Recover(lines [][]byte) (int, error) {
	s.mu.Lock()
	now := s.now()
	n := 0
	for _, b := range lines {
		var l logLine
		if json.Unmarshal(b, &l) != nil || l.Record == nil || l.Key == "" || !now.Before(l.Expires) {
			continue
		}
		e, ok := s.entries[l.Key]
		if !ok {
			settled, err := s.settledOnDisk(l.Key)
			if err != nil {
				return n, s.unlock(err, nil)
			}
			if settled {
				continue // the log holds its result: nothing to take
			}
		} else {
			cur, err := e.record()
			if err != nil {
				return n, s.unlock(err, nil)
			}
			if !cur.Pending() || l.Record.Pending() {
				continue
			}
		}
		if err := s.changeUntil(l.Key, l.Record, nil, l.Expires); err != nil {
			return n, s.unlock(err, nil)
		}
		n++
	}
	return n, s.unlock(nil, nil)
}

// Close waits for a running compaction and closes the log; the runs stay
// on disk for the next open.
func (s *FileIdempotency) Close() error {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done != nil {
		<-done
	}
	s.mu.Lock()
	for _, g := range append(s.retired, s.base, s.cur) {
		g.close()
	}
	closeRuns(s.runs) // the manifest names them for the next open
	s.runs = nil
	s.mu.Unlock()
	return s.log.Close()
}
