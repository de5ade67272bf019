package connector

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/perpgate/perpgate/pkg/appendlog"
)

// NewFileIdempotency opens (or creates, mode 0600) the log at path; now
// may be nil.
func NewFileIdempotency(path string, now func() time.Time) (*FileIdempotency, error) {
	mem := NewMemoryIdempotency(now)
	mem.onDisk = map[uint64]diskEntry{}
	s := &FileIdempotency{MemoryIdempotency: mem, path: path, compactAt: compactMinBytes, recordBytes: 400, sealAt: sealAt}
	files, err := openLogFiles(path)
	if err != nil {
		return nil, err
	}
	reused, err := s.reuse(files)
	if err != nil {
		closeRuns(s.runs)
		files.close()
		return nil, err
	}
	if reused {
		s.adopt(files)
	} else {
		files.close()
		if err := s.rebuild(); err != nil {
			return nil, err
		}
	}
	s.removeUnnamedRuns()
	if err := s.openLog(); err != nil {
		return nil, err
	}
	if !reused {
		s.saveManifest(0)
	}
	if s.retired != nil {
		s.compactOld()
	}
	return s, nil
}

// openLogFiles opens the files of the log at path that exist; the log
// itself is created if a crash left none (mid-rotation).
func openLogFiles(path string) (logFiles, error) {
	var l logFiles
	for _, p := range []struct {
		name string
		seg  **segment
	}{{path + ".base", &l.base}, {path + ".old", &l.old}} {
		f, err := os.Open(p.name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			l.close()
			return logFiles{}, fmt.Errorf("idempotency log: %w", err)
		}
		*p.seg = &segment{f: f}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o600)
	if err != nil {
		l.close()
		return logFiles{}, fmt.Errorf("idempotency log: %w", err)
	}
	l.cur = &segment{f: f}
	return l, nil
}

// adopt keeps the files a reused manifest's state points into. A rotated
// log still needed (a crash cut its compaction short) is compacted at
// once, as it would have been; one that is not is a finished
// compaction's leftover.
func (s *FileIdempotency) adopt(files logFiles) {
	s.base, s.cur = files.base, files.cur
	if files.old == nil {
		return
	}
	needed := false
	for _, r := range s.runs {
		needed = needed || r.seg == files.old
	}
	for _, e := range s.entries {
		needed = needed || e.ref.seg == files.old
	}
	for _, d := range s.onDisk {
		needed = needed || d.ref.seg == files.old
	}
	if needed {
		s.retired = []*segment{files.base, files.old}
		return
	}
	files.old.close()
	_ = os.Remove(s.path + ".old")
}

// compactOld compacts the rotated log adopt kept, in the background.
func (s *FileIdempotency) compactOld() {
	done := make(chan struct{})
	s.mu.Lock()
	s.compacting, s.done = true, done
	s.mu.Unlock()
	go func() {
		s.mu.Lock()
		items := s.items()
		s.mu.Unlock()
		s.compact(items, done)
	}()
}

// rebuild replays every file of the log and writes the live records as
// the base, indexed by one run; then the logs they came from go. It is
// always correct, and what an open does without a manifest it can trust.
func (s *FileIdempotency) rebuild() error {
	path, mem := s.path, s.MemoryIdempotency
	if err := removeManifest(path); err != nil {
		return err
	}
	var replayed []*segment
	defer func() {
		for _, g := range replayed {
			g.close() // the base copied what was live from them
		}
	}()
	claims := map[string]memEntry{}
	for _, p := range []string{path + ".base", path + ".old", path} {
		seg, err := replay(p, mem, claims)
		if err != nil {
			return err
		}
		if seg != nil {
			replayed = append(replayed, seg)
		}
	}
	for k, e := range claims { // the claims no result followed
		rec, err := e.record()
		if err != nil {
			return err
		}
		mem.entries[k] = memEntry{rec: rec, expires: e.expires}
	}
	items := mem.items()
	base, err := writeBase(path+".base", items)
	if err != nil {
		return err
	}
	s.base = base
	s.runFiles = runFiles{path: path}
	s.removeUnnamedRuns() // s.runs is empty: every run of an earlier index
	run, err := baseRun(&s.runFiles, base, items, mem.hash)
	if err != nil {
		base.close()
		return err
	}
	if run != nil {
		mem.runs = []*diskRun{run}
	}
	for _, it := range items {
		if it.settled() {
			delete(mem.entries, it.key)
		}
	}
	for _, p := range []string{path + ".old", path} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			base.close()
			return fmt.Errorf("idempotency log: %w", err)
		}
	}
	return nil
}

// openLog opens the log for appending after the records opening found.
func (s *FileIdempotency) openLog() error {
	log, err := appendlog.Open(s.path)
	if err == nil && s.cur == nil {
		s.cur, err = openSegment(s.path)
	}
	var fi os.FileInfo
	if err == nil {
		fi, err = s.cur.f.Stat()
	}
	if err != nil {
		if log != nil {
			log.Close()
		}
		closeRuns(s.runs)
		for _, g := range append(s.retired, s.base, s.cur) {
			g.close()
		}
		return fmt.Errorf("idempotency log: %w", err)
	}
	s.log = log
	s.curOff, s.logBytes = fi.Size(), fi.Size()
	s.persist, s.durable = s.append, s.sync
	s.changed = func() {
		s.seal()
		s.maybeCompact()
	}
	return nil
}
