package connector

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/perpgate/perpgate/pkg/appendlog"
	"github.com/perpgate/perpgate/pkg/hashindex"
)

// The manifest (path.manifest) lets an open reuse the runs on disk
// instead of rebuilding them. It describes the store at one moment: the
// runs (each over a file it names by identity and how much of it the run
// needs), the records memory held then (claims and results whose settle
// was not done: a few, kept as their log lines), and the log file and
// offset past which every later change is. Replaying the log from there
// over that state gives the state of the log's end: replay sets a key to
// its last line, and a key's last line before the moment is in the
// replayed part whenever any of its lines is.
//
// It is written, through a temporary file, an fsync and a rename, after
// what it names is durable (a seal's runs and the log up to the offset,
// a compaction's base and run), and removed when it cannot be, so the
// manifest on disk is always a moment the files still show. Open checks
// every file it names (device, inode, length and a checksum of the bytes
// just before the length, against an inode reused for another file) and
// rebuilds when one does not match.
type manifest struct {
	Salt  uint64            `json:"salt"`
	Runs  []manifestRun     `json:"runs"`
	Extra []json.RawMessage `json:"extra,omitempty"`
	Tail  fileMark          `json:"tail"`
}

type manifestRun struct {
	Name    string   `json:"name"` // in the log's directory
	Len     int      `json:"len"`
	Expires int64    `json:"expires"`
	Seg     fileMark `json:"seg"`
}

// fileMark names a file of the log (the base, the log or the rotated log)
// and the first Size bytes of it something depends on; Sum is the CRC-32
// of the up to markSpan bytes before Size.
type fileMark struct {
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
	Size int64  `json:"size"`
	Sum  uint32 `json:"sum"`
}

const markSpan = 4 << 10

// markOf marks the first size bytes of seg's file.
func markOf(seg *segment, size int64) (fileMark, error) {
	fi, err := seg.f.Stat()
	if err != nil {
		return fileMark{}, err
	}
	dev, ino, ok := fileID(fi)
	if !ok {
		return fileMark{}, errors.New("file identity unknown")
	}
	sum, err := tailSum(seg.f, size)
	return fileMark{Dev: dev, Ino: ino, Size: size, Sum: sum}, err
}

func tailSum(f *os.File, size int64) (uint32, error) {
	from := max(size-markSpan, 0)
	buf := make([]byte, size-from)
	if _, err := f.ReadAt(buf, from); err != nil && !(errors.Is(err, io.EOF) && len(buf) == 0) {
		return 0, err
	}
	return crc32.ChecksumIEEE(buf), nil
}

// matches reports whether seg's file is the one m names, still holding the
// bytes m depends on.
func (m fileMark) matches(seg *segment) bool {
	if seg == nil {
		return false
	}
	fi, err := seg.f.Stat()
	if err != nil || fi.Size() < m.Size {
		return false
	}
	dev, ino, ok := fileID(fi)
	if !ok || dev != m.Dev || ino != m.Ino {
		return false
	}
	sum, err := tailSum(seg.f, m.Size)
	return err == nil && sum == m.Sum
}

func manifestPath(path string) string { return path + ".manifest" }

func readManifest(path string) (manifest, error) {
	var m manifest
	b, err := os.ReadFile(manifestPath(path))
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(b, &m)
}

// removeManifest makes the next open rebuild; the removal must be durable
// before anything the manifest names changes.
func removeManifest(path string) error {
	if err := os.Remove(manifestPath(path)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("idempotency manifest: %w", err)
	}
	return appendlog.SyncDir(path)
}

// saveManifest writes the manifest of the store as it is, with the log
// replayed from tailOff in the current log; under mu. On failure the
// manifest is removed, so an open never trusts an older moment than the
// files show.
func (s *FileIdempotency) saveManifest(tailOff int64) {
	if s.hashKey != nil { // a test's hash: a later process could not repeat it
		_ = removeManifest(s.path)
		return
	}
	if err := s.writeManifest(tailOff); err != nil {
		_ = removeManifest(s.path)
	}
}

func (s *FileIdempotency) writeManifest(tailOff int64) error {
	// The log must hold on disk what the manifest says is before tailOff.
	if err := s.log.Sync(s.last); err != nil {
		return err
	}
	tail, err := markOf(s.cur, tailOff)
	if err != nil {
		return err
	}
	m := manifest{Salt: s.salt, Tail: tail}
	for _, r := range s.runs {
		m.Runs = append(m.Runs, manifestRun{Name: filepath.Base(r.name), Len: r.run.Len(), Expires: r.expires, Seg: r.mark})
	}
	for k, e := range s.entries {
		line, err := entryLine(k, e)
		if err != nil {
			return err
		}
		m.Extra = append(m.Extra, line)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return appendlog.WriteFile(manifestPath(s.path), b)
}

// entryLine is the log line of an entry held in memory.
func entryLine(key string, e memEntry) ([]byte, error) {
	if e.ref.seg != nil {
		return e.ref.seg.raw(e.ref.off, e.ref.n)
	}
	return json.Marshal(logLine{Key: key, Record: &e.rec, Expires: e.expires})
}

// logFiles are the files of the log an open finds, as segments (nil when
// absent).
type logFiles struct{ base, old, cur *segment }

func (l logFiles) find(m fileMark) *segment {
	for _, g := range []*segment{l.base, l.old, l.cur} {
		if m.matches(g) {
			return g
		}
	}
	return nil
}

func (l logFiles) close() {
	l.base.close()
	l.old.close()
	l.cur.close()
}

// reuse opens the store from the manifest: its runs as they are, the
// records it held, and the log replayed from its tail. It reports false,
// having changed nothing a rebuild reads, when the manifest is missing or names
// something the files do not show.
func (s *FileIdempotency) reuse(files logFiles) (bool, error) {
	m, err := readManifest(s.path)
	if err != nil {
		return false, nil
	}
	tail := files.find(m.Tail)
	if tail == nil || tail == files.base {
		return false, nil
	}
	extra, ok := decodeExtra(m.Extra)
	if !ok {
		return false, nil
	}
	runs, ok := openRuns(s.path, m, files, s.now())
	if !ok {
		return false, nil
	}
	s.salt, s.runs = m.Salt, runs
	mem := s.MemoryIdempotency
	for _, l := range extra {
		if s.now().Before(l.Expires) {
			mem.entries[l.Key] = memEntry{rec: *l.Record, expires: l.Expires}
		}
	}
	claims := map[string]memEntry{}
	from := m.Tail.Size
	if tail == files.old {
		if _, err := replaySegment(files.old, from, mem, claims); err != nil {
			return false, err
		}
		from = 0
	}
	end, err := replaySegment(files.cur, from, mem, claims)
	if err != nil {
		return false, err
	}
	if err := settleReplayed(mem, claims); err != nil {
		return false, err
	}
	// A line torn by a crash would join the next one appended.
	if err := os.Truncate(s.path, end); err != nil {
		return false, fmt.Errorf("idempotency log: %w", err)
	}
	s.runFiles = runFiles{path: s.path, next: lastRunNumber(s.path, m)}
	return true, nil
}

func decodeExtra(lines []json.RawMessage) ([]logLine, bool) {
	out := make([]logLine, len(lines))
	for i, b := range lines {
		if json.Unmarshal(b, &out[i]) != nil || out[i].Record == nil {
			return nil, false
		}
	}
	return out, true
}

// settleReplayed keeps the results replay found on disk by hash and the
// claims no result followed in memory, as a running store does.
func settleReplayed(mem *MemoryIdempotency, claims map[string]memEntry) error {
	for k, e := range mem.entries {
		if e.ref.seg != nil {
			delete(mem.entries, k)
			mem.store(k, e)
		}
	}
	for k, e := range claims {
		rec, err := e.record()
		if err != nil {
			return err
		}
		mem.entries[k] = memEntry{rec: rec, expires: e.expires}
	}
	return nil
}

// openRuns opens the runs m names; a run whose records all expired may be
// gone (sweepRuns deletes it without a new manifest) and is skipped.
func openRuns(path string, m manifest, files logFiles, now time.Time) ([]*diskRun, bool) {
	var runs []*diskRun
	dir := filepath.Dir(path)
	for _, mr := range m.Runs {
		name := filepath.Join(dir, mr.Name)
		if now.UnixNano() >= mr.Expires {
			_ = os.Remove(name)
			continue
		}
		seg := files.find(mr.Seg)
		r, err := hashindex.Open(name)
		if err != nil || seg == nil || r.Len() != mr.Len {
			_ = r.Close()
			closeRuns(runs)
			return nil, false
		}
		runs = append(runs, &diskRun{run: r, seg: seg, expires: mr.Expires, name: name, mark: mr.Seg})
	}
	return runs, true
}

func closeRuns(runs []*diskRun) {
	for _, r := range runs {
		_ = r.run.Close()
	}
}

// lastRunNumber is the highest number of a run file the manifest names or
// the directory holds, so a new run never takes a name the manifest uses.
func lastRunNumber(path string, m manifest) int {
	names, _ := filepath.Glob(path + ".run.*")
	for _, r := range m.Runs {
		names = append(names, filepath.Join(filepath.Dir(path), r.Name))
	}
	last := 0
	for _, n := range names {
		var i int
		if _, err := fmt.Sscanf(n[len(path):], ".run.%d", &i); err == nil {
			last = max(last, i)
		}
	}
	return last
}

// removeUnnamedRuns deletes the run files no run of s is: a seal's runs a
// crash kept out of the manifest, or runs of an index being rebuilt.
func (s *FileIdempotency) removeUnnamedRuns() {
	keep := map[string]bool{}
	for _, r := range s.runs {
		keep[r.name] = true
	}
	names, _ := filepath.Glob(s.path + ".run.*")
	for _, n := range names {
		if !keep[n] {
			_ = os.Remove(n)
		}
	}
}
