package filestore

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
)

// The audit log is kept in segments so that retention drops whole files,
// oldest first, and never rewrites the log: audit.jsonl takes the appends
// and is renamed to audit.jsonl.<its last write, UTC> by the append that
// makes it a segment's size, by PruneAudit once its entries have all aged
// out, and by Open when a previous run left it; PruneAudit removes the
// oldest segments while they are too old or the segments and the log
// together are too big. A segment's index (<segment>.idx) is what the
// appends gathered, so sealing reads nothing; only a segment a previous
// run left is read for it, in the background.

// segmentTime is the layout of a sealed segment's name after AuditFileName + ".".
const segmentTime = "20060102T150405.000000000Z"

// segments returns the sealed segments' paths, oldest first.
func (s *Store) segments() ([]string, error) {
	matches, err := filepath.Glob(s.auditPath() + ".*")
	if err != nil {
		return nil, err
	}
	out := matches[:0]
	for _, m := range matches {
		if _, err := time.Parse(segmentTime, strings.TrimPrefix(m, s.auditPath()+".")); err == nil {
			out = append(out, m)
		}
	}
	slices.Sort(out) // the names sort as their times
	return out, nil
}

// segmentBytes is the size at which the log becomes a segment: a
// sixteenth of the retention's size, 1 to 64 MB.
func segmentBytes(maxBytes int64) int64 {
	return min(max(maxBytes/16, 1<<20), 64<<20)
}

// PruneAudit implements keys.AuditPruner.
func (s *Store) PruneAudit(ctx context.Context, before time.Time, maxBytes int64) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := s.sealAuditLog(before, maxBytes); err != nil {
		return 0, err
	}
	segs, err := s.segments()
	if err != nil {
		return 0, fmt.Errorf("audit retention: %w", err)
	}
	sizes := make([]int64, len(segs))
	var total int64
	for i, p := range segs {
		fi, err := os.Stat(p)
		if err != nil {
			return 0, fmt.Errorf("audit retention: %w", err)
		}
		sizes[i] = fi.Size()
		total += fi.Size()
	}
	if fi, err := os.Stat(s.auditPath()); err == nil {
		total += fi.Size()
	}
	var dropped int64
	for i, p := range segs {
		sealed, _ := time.Parse(segmentTime, strings.TrimPrefix(p, s.auditPath()+"."))
		if !sealed.Before(before) && total <= maxBytes {
			break
		}
		if err := os.Remove(p); err != nil {
			return dropped, fmt.Errorf("audit retention: %w", err)
		}
		_ = os.Remove(p + ".idx")
		s.auditMu.Lock()
		delete(s.auditIndex, p)
		s.auditMu.Unlock()
		total -= sizes[i]
		dropped += sizes[i]
	}
	return dropped, nil
}

// sealAuditLog turns the log into a segment when it has reached a
// segment's size, or when it holds nothing newer than before; it sets the
// size at which appends seal the log from now on.
func (s *Store) sealAuditLog(before time.Time, maxBytes int64) error {
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	s.auditSegBytes = segmentBytes(maxBytes)
	fi, err := os.Stat(s.auditPath())
	if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Size() == 0 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("audit retention: %w", err)
	}
	newest := s.live.newest(fi.ModTime())
	if fi.Size() < s.auditSegBytes && !newest.Before(before) {
		return nil
	}
	if s.auditLog == nil { // its last open or seal failed: the appends did not see all of it
		s.live = newLiveIndex()
		return s.sealUnindexed(fi.ModTime())
	}
	return s.sealLive(newest)
}

// sealLive renames the log to a segment named by at and goes on in a new
// file; appends wait meanwhile (one fsync). The segment's index is what
// the appends gathered, written beside it in the background, or, when
// they did not see all of it, read from it there. auditMu is held.
func (s *Store) sealLive(at time.Time) error {
	seg := s.segmentName(at)
	if err := s.auditLog.Rotate(seg); err != nil {
		_ = s.auditLog.Close()
		s.auditLog = nil // the next append opens the log afresh
		s.live.complete = false
		return fmt.Errorf("audit retention: %w", err)
	}
	live := s.live
	s.live = newLiveIndex()
	if !live.complete {
		s.indexLater(seg)
		return nil
	}
	ix := live.sealed()
	s.auditIndex[seg] = ix
	s.inBackground(func() { writeIndexFile(seg, ix) })
	return nil
}

// sealLeftoverAudit makes the log a previous run left a segment, so that
// the log this store appends to holds only entries it indexed as it wrote
// them. The segment is indexed in the background: a restart does not wait
// for a read of it, and neither do appends.
func (s *Store) sealLeftoverAudit() error {
	fi, err := os.Stat(s.auditPath())
	if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Size() == 0 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return s.sealUnindexed(fi.ModTime())
}

// sealUnindexed renames the log, which no append of this store is
// writing, to a segment named by at and indexes it in the background.
func (s *Store) sealUnindexed(at time.Time) error {
	seg := s.segmentName(at)
	if err := os.Rename(s.auditPath(), seg); err != nil {
		return fmt.Errorf("seal audit log: %w", err)
	}
	s.indexLater(seg)
	return nil
}

// segmentName is the name of a segment sealed at t, a nanosecond later
// while a segment has that name (a name it cannot check is taken as free:
// the rename then says what is wrong).
func (s *Store) segmentName(t time.Time) string {
	for {
		name := s.auditPath() + "." + t.UTC().Format(segmentTime)
		if _, err := os.Lstat(name); err != nil {
			return name
		}
		t = t.Add(time.Nanosecond)
	}
}

// indexLater reads seg's index in the background. auditMu is held, or the
// store is not yet shared.
func (s *Store) indexLater(seg string) {
	s.inBackground(func() { _, _ = s.indexOf(seg) })
}

// inBackground runs f unless the store is closing, and Close waits for it.
// auditMu is held, or the store is not yet shared.
func (s *Store) inBackground(f func()) {
	select {
	case <-s.stopIndexing:
		return
	default:
	}
	s.indexing.Add(1)
	go func() {
		defer s.indexing.Done()
		f()
	}()
}

// liveIndex is what the appends to the log have gathered of its index.
type liveIndex struct {
	index    segmentIndex
	pending  map[string]struct{} // PENDING entries no final entry followed in the file
	finals   map[string]struct{} // final entries whose PENDING entry is not in the file
	bytes    int64               // written since the log began
	complete bool                // every entry of the file is in index
}

func newLiveIndex() liveIndex {
	return liveIndex{index: segmentIndex{Accounts: map[string]struct{}{}}, pending: map[string]struct{}{},
		finals: map[string]struct{}{}, complete: true}
}

// indexEntry is what an index reads of an entry.
type indexEntry struct {
	Time      time.Time `json:"time"`
	AccountID string    `json:"accountId"`
	RequestID string    `json:"requestId"`
	Code      string    `json:"code"`
}

// newest is the time a segment of the log is named by, so that no entry
// in it is newer: its last write at wall, or its newest entry's time when
// that is later (entries carry the edge's clock, which may run ahead of
// this host's).
func (l *liveIndex) newest(wall time.Time) time.Time {
	if l.complete && l.index.Last.After(wall) {
		return l.index.Last
	}
	return wall
}

func (l *liveIndex) add(e indexEntry, n int64) {
	if l.index.First.IsZero() || e.Time.Before(l.index.First) {
		l.index.First = e.Time
	}
	if e.Time.After(l.index.Last) {
		l.index.Last = e.Time
	}
	l.index.Accounts[e.AccountID] = struct{}{}
	l.bytes += n
	// Entries may land in any order: a PENDING entry after its final one
	// is settled too.
	_, pending := l.pending[e.RequestID]
	_, final := l.finals[e.RequestID]
	switch {
	case e.Code != contract.AuditPending && pending:
		delete(l.pending, e.RequestID)
	case e.Code != contract.AuditPending:
		l.finals[e.RequestID] = struct{}{}
	case final:
		delete(l.finals, e.RequestID)
	default:
		l.pending[e.RequestID] = struct{}{}
	}
}

// sealed is the index of the file the entries came from.
func (l *liveIndex) sealed() segmentIndex {
	ix := l.index
	ix.Settle = &settleIndex{Pending: slices.Sorted(maps.Keys(l.pending)), Finals: slices.Sorted(maps.Keys(l.finals))}
	return ix
}

// settleIndex is what settling PENDING entries at start needs of a
// segment: a segment without Pending need not be read, and a PENDING entry
// whose final entry went into a later segment is in that one's Finals.
// Both hold only the requests in flight when a segment began or ended,
// and what a crash or a full disk left PENDING.
type settleIndex struct {
	Pending []string `json:"pending"`
	Finals  []string `json:"finals"`
}

// segmentIndex is what a sealed segment holds, kept beside it in
// <segment>.idx: an audit page reads only the segments whose entries may
// be on it.
type segmentIndex struct {
	First    time.Time           `json:"first"`
	Last     time.Time           `json:"last"`
	Accounts map[string]struct{} `json:"accounts"`
	// Settle is nil in an index written before it was kept: such a
	// segment is read by every query of PENDING entries.
	Settle *settleIndex `json:"settle,omitempty"`
}

// indexOf returns a segment's index: cached, from its .idx or, when that
// is missing, read from the segment itself (and the .idx written). It
// reads files without auditMu, so appends never wait for it.
func (s *Store) indexOf(seg string) (segmentIndex, error) {
	s.auditMu.Lock()
	ix, ok := s.auditIndex[seg]
	s.auditMu.Unlock()
	if ok {
		return ix, nil
	}
	ix, err := s.readIndex(seg)
	if err != nil {
		return ix, err
	}
	s.auditMu.Lock()
	if _, err := os.Lstat(seg); err == nil { // not dropped by retention meanwhile
		s.auditIndex[seg] = ix
	}
	s.auditMu.Unlock()
	return ix, nil
}

// errIndexingStopped ends a segment's read when the store closes.
var errIndexingStopped = errors.New("audit segment index: the store is closing")

// readIndex reads seg's .idx or, when it is missing or unreadable, seg's
// entries, and then writes the .idx.
func (s *Store) readIndex(seg string) (segmentIndex, error) {
	var ix segmentIndex
	if b, err := os.ReadFile(seg + ".idx"); err == nil && json.Unmarshal(b, &ix) == nil && ix.Accounts != nil {
		return ix, nil
	}
	f, err := os.Open(seg)
	if err != nil {
		return ix, err
	}
	defer f.Close()
	live := newLiveIndex()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 0; sc.Scan(); n++ {
		if n%4096 == 0 {
			select {
			case <-s.stopIndexing:
				return ix, errIndexingStopped
			default:
			}
		}
		var e indexEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		live.add(e, 0)
	}
	if err := sc.Err(); err != nil {
		return ix, err
	}
	ix = live.sealed()
	writeIndexFile(seg, ix) // without it the next start reads the segment again
	return ix, nil
}

// writeIndexFile writes seg's index beside it; one that is lost is read
// again from the segment.
func writeIndexFile(seg string, ix segmentIndex) {
	if b, err := json.Marshal(ix); err == nil {
		_ = os.WriteFile(seg+".idx", b, 0o600)
	}
}

// readAudit adds to byID the entries of q's account from every file of
// the audit log that may hold entries of q's page, oldest first, and stops
// once later segments cannot: their entries all come after the page's
// last. It reads the files as they were when it began, without auditMu.
func (s *Store) readAudit(q keys.AuditQuery, byID map[string]contract.AuditEntry) error {
	segs, live, settledLater, err := s.auditFiles(q.Pending)
	if err != nil {
		return err
	}
	if live != nil {
		defer live.Close()
	}
	from := q.Since
	if q.AfterTime.After(from) && !q.Newest {
		from = q.AfterTime
	}
	if q.Pending { // final entries the segments hold for PENDING ones in others
		for _, seg := range segs {
			if ix, err := s.indexOf(seg); err == nil && ix.Settle != nil {
				for _, id := range ix.Settle.Finals {
					settledLater[id] = struct{}{}
				}
			}
		}
	}
	for i, seg := range segs {
		ix, err := s.indexOf(seg)
		if errors.Is(err, fs.ErrNotExist) {
			continue // dropped by retention since the listing
		}
		if err != nil {
			return err
		}
		if _, ok := ix.Accounts[q.AccountID]; !ok || ix.Last.Before(from) || !ix.First.Before(q.Until) ||
			q.Pending && ix.Settle != nil && allIn(ix.Settle.Pending, settledLater) {
			continue
		}
		if err := readAuditFile(seg, q.AccountID, byID); err != nil {
			return err
		}
		next := time.Time{} // the live log's entries may be any time
		if i+1 < len(segs) {
			nix, err := s.indexOf(segs[i+1])
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			next = nix.First
		}
		if last, full := pageEnd(byID, q); !q.Pending && !q.Newest && full && !next.IsZero() && next.After(last) {
			return nil
		}
	}
	for id := range settledLater {
		if e, ok := byID[id]; ok && e.Code == contract.AuditPending {
			delete(byID, id)
		}
	}
	if live == nil {
		return nil
	}
	return readAuditEntries(live, q.AccountID, byID)
}

// allIn reports whether every id is in set.
func allIn(ids []string, set map[string]struct{}) bool {
	for _, id := range ids {
		if _, ok := set[id]; !ok {
			return false
		}
	}
	return true
}

// auditFiles lists the sealed segments and opens the log, under auditMu so
// that no seal falls between: an entry is in one of them (the log is read
// through the file opened, which a seal only renames). With pending, it
// also returns the final entries the log holds for PENDING entries in the
// segments (the requests in flight when the last segment was sealed).
func (s *Store) auditFiles(pending bool) ([]string, *os.File, map[string]struct{}, error) {
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	segs, err := s.segments()
	if err != nil {
		return nil, nil, nil, err
	}
	finals := map[string]struct{}{}
	if pending && s.live.complete {
		maps.Copy(finals, s.live.finals)
	}
	live, err := os.Open(s.auditPath())
	if errors.Is(err, fs.ErrNotExist) {
		return segs, nil, finals, nil
	}
	return segs, live, finals, err
}

// pageEnd is the time of the last entry of q's page among byID, and
// whether byID fills the page.
func pageEnd(byID map[string]contract.AuditEntry, q keys.AuditQuery) (time.Time, bool) {
	var times []time.Time
	for _, e := range byID {
		if onPage(e, q) {
			times = append(times, e.Time)
		}
	}
	if len(times) < q.Limit {
		return time.Time{}, false
	}
	slices.SortFunc(times, time.Time.Compare)
	return times[q.Limit-1], true
}

// onPage reports whether e is within q's window and after its cursor.
func onPage(e contract.AuditEntry, q keys.AuditQuery) bool {
	if e.Time.Before(q.Since) || !e.Time.Before(q.Until) || q.Pending && e.Code != contract.AuditPending {
		return false
	}
	c := e.Time.Compare(q.AfterTime)
	if q.Newest {
		return c < 0 || c == 0 && e.RequestID < q.AfterID
	}
	return c > 0 || c == 0 && e.RequestID > q.AfterID
}
