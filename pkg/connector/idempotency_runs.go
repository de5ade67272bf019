package connector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/perpgate/perpgate/pkg/hashindex"
)

// The file store's settled records are indexed by hash in onDisk until it
// holds sealAt of them; then that index goes to sorted files beside the
// log (one per log segment, hashindex runs), so the heap does not grow
// with the 24 hours of records the store keeps. Runs are durable and named
// in the manifest (idempotency_manifest.go), so an open reuses them; they
// are dropped whole once every record in them expired or a compaction
// moved them.

// sealAt is how many settled records onDisk holds before they go to runs.
const sealAt = 1 << 14

// diskRun is a sorted index of settled records whose lines are in seg:
// entries of key hash, line offset and length, and expiry (Unix ns).
type diskRun struct {
	run     *hashindex.Run
	seg     *segment
	expires int64 // the latest expiry of its records
	name    string
	// mark names seg's file and the bytes the run's lines are in.
	mark fileMark
}

// runFiles is how the store names its runs.
type runFiles struct {
	path string
	next int
}

func (f *runFiles) name() string {
	f.next++
	return fmt.Sprintf("%s.run.%d", f.path, f.next)
}

// findRun looks key (hash h) up in the runs, newest first; mu is held.
func (s *MemoryIdempotency) findRun(key string, h uint64) (memEntry, bool, error) {
	for i := len(s.runs) - 1; i >= 0; i-- {
		r := s.runs[i]
		var found memEntry
		var ok bool
		var rerr error
		err := r.run.Find(h, func(e hashindex.Entry) bool {
			k, rec, err := r.seg.readLine(int64(e.Off), int32(e.N))
			if err != nil {
				rerr = err
				return false
			}
			if k != key {
				return true // another key's hash
			}
			found, ok = memEntry{rec: rec, expires: time.Unix(0, int64(e.Aux))}, true
			return false
		})
		if err == nil {
			err = rerr
		}
		if err != nil || ok {
			return found, ok, err
		}
	}
	return memEntry{}, false, nil
}

// settledOnDisk reports whether key is one of the settled records kept on
// disk by hash (onDisk or a run), reading only the start of its line: a
// line begins with its key as json.Marshal wrote it, so the record is not
// decoded (Recover asks this for every line of a journal's tail). A line
// that does not begin so is decoded to compare the keys; mu is held.
func (s *MemoryIdempotency) settledOnDisk(key string) (bool, error) {
	quoted, err := json.Marshal(key)
	if err != nil {
		return false, err
	}
	prefix := append(append([]byte(`{"k":`), quoted...), ',')
	is := func(seg *segment, off int64, n int32) (bool, error) {
		buf, err := seg.raw(off, n)
		if err != nil {
			return false, err
		}
		if bytes.HasPrefix(buf, prefix) {
			return true, nil
		}
		var l logLine
		if err := json.Unmarshal(buf, &l); err != nil {
			return false, fmt.Errorf("idempotency log: record at %d is unreadable: %v", off, err)
		}
		return l.Key == key, nil
	}
	h := s.hash(key)
	if d, ok := s.onDisk[h]; ok {
		if found, err := is(d.ref.seg, d.ref.off, d.ref.n); found || err != nil {
			return found, err
		}
	}
	for i := len(s.runs) - 1; i >= 0; i-- {
		r := s.runs[i]
		var found bool
		var rerr error
		err := r.run.Find(h, func(e hashindex.Entry) bool {
			found, rerr = is(r.seg, int64(e.Off), int32(e.N))
			return !found && rerr == nil
		})
		if err == nil {
			err = rerr
		}
		if found || err != nil {
			return found, err
		}
	}
	return false, nil
}

// runLen is how many records the runs hold.
func (s *MemoryIdempotency) runLen() int {
	n := 0
	for _, r := range s.runs {
		n += r.run.Len()
	}
	return n
}

// sweepRuns drops the runs whose records all expired; mu is held.
func (s *MemoryIdempotency) sweepRuns(now time.Time) {
	kept := s.runs[:0]
	for _, r := range s.runs {
		if now.UnixNano() >= r.expires {
			_ = r.run.Remove()
			continue
		}
		kept = append(kept, r)
	}
	clear(s.runs[len(kept):])
	s.runs = kept
}

// writeRun writes the records of entries (all in seg) as a run.
func writeRun(files *runFiles, seg *segment, entries []hashindex.Entry) (*diskRun, error) {
	r := &diskRun{seg: seg, name: files.name()}
	var end int64
	for _, e := range entries {
		r.expires = max(r.expires, int64(e.Aux))
		end = max(end, int64(e.Off)+int64(e.N))
	}
	mark, err := markOf(seg, end)
	if err != nil {
		return nil, fmt.Errorf("idempotency log: %w", err)
	}
	r.mark = mark
	// Durable: the manifest that names it lets a later open read it.
	if r.run, err = hashindex.Write(r.name, entries); err != nil {
		return nil, fmt.Errorf("idempotency log: %w", err)
	}
	return r, nil
}

// seal moves the settled records to runs, one per segment they are in, and
// writes the manifest that names them; it runs under the store's lock
// after a change (a few fsyncs once every sealAt records), unless a
// compaction runs (the runs it copies must stay as they are until it ends).
func (s *FileIdempotency) seal() {
	if s.compacting || len(s.onDisk)+len(s.entries) < s.sealAt {
		return
	}
	bySeg := map[*segment][]hashindex.Entry{}
	for h, d := range s.onDisk {
		bySeg[d.ref.seg] = append(bySeg[d.ref.seg], hashindex.Entry{Key: h, Off: uint64(d.ref.off), N: uint32(d.ref.n), Aux: uint64(d.expires)})
	}
	// Settled records kept by name (their hash was taken) go too: a run
	// holds any number of keys a hash.
	var named []string
	for k, e := range s.entries {
		if e.ref.seg != nil && e.settle == nil {
			named = append(named, k)
			bySeg[e.ref.seg] = append(bySeg[e.ref.seg], hashindex.Entry{Key: s.hash(k), Off: uint64(e.ref.off), N: uint32(e.ref.n),
				Aux: uint64(e.expires.UnixNano())})
		}
	}
	var runs []*diskRun
	for seg, entries := range bySeg {
		r, err := writeRun(&s.runFiles, seg, entries)
		if err != nil {
			for _, r := range runs {
				_ = r.run.Remove()
			}
			return // onDisk keeps them; the next change tries again
		}
		runs = append(runs, r)
	}
	s.runs = append(s.runs, runs...)
	s.onDisk = map[uint64]diskEntry{}
	for _, k := range named {
		delete(s.entries, k)
	}
	s.saveManifest(s.curOff)
}

// runItems lists the unexpired records of the runs, for a new base; mu
// is held. A record a newer one of its key shadows has expired (a key is
// claimed again only then), so none is listed twice.
func (s *MemoryIdempotency) runItems(items []baseItem) []baseItem {
	now := s.now().UnixNano()
	for _, r := range s.runs {
		_ = r.run.Scan(func(_ int, e hashindex.Entry) bool {
			if now < int64(e.Aux) {
				items = append(items, baseItem{hash: e.Key, fromRun: true,
					e: memEntry{ref: diskRef{seg: r.seg, off: int64(e.Off), n: int32(e.N)}, expires: time.Unix(0, int64(e.Aux))}})
			}
			return true
		})
	}
	return items
}

// baseRun indexes the settled records of a new base as one run over it;
// nil when there are none. hash hashes the items listed by key.
func baseRun(files *runFiles, base *segment, items []baseItem, hash func(string) uint64) (*diskRun, error) {
	var entries []hashindex.Entry
	for _, it := range items {
		if !it.settled() {
			continue
		}
		h := it.hash
		if it.key != "" {
			h = hash(it.key)
		}
		entries = append(entries, hashindex.Entry{Key: h, Off: uint64(it.moved.off), N: uint32(it.moved.n), Aux: uint64(it.e.expires.UnixNano())})
	}
	if len(entries) == 0 {
		return nil, nil
	}
	return writeRun(files, base, entries)
}
