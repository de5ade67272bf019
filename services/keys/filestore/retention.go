package filestore

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
)

// The audit log is kept in segments so that retention drops whole files,
// oldest first, and never rewrites the log: audit.jsonl takes the appends,
// and PruneAudit renames it to audit.jsonl.<its last write, UTC> once it is a
// segment's size (or its entries have all aged out), then removes the
// oldest segments while they are too old or the segments and the log
// together are too big.

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
// segment's size, or when it holds nothing newer than before.
func (s *Store) sealAuditLog(before time.Time, maxBytes int64) error {
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	fi, err := os.Stat(s.auditPath())
	if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Size() == 0 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("audit retention: %w", err)
	}
	if fi.Size() < segmentBytes(maxBytes) && !fi.ModTime().Before(before) {
		return nil
	}
	// Named by its last write: no entry in it is newer.
	seg := s.auditPath() + "." + fi.ModTime().UTC().Format(segmentTime)
	if s.auditLog == nil {
		if err := os.Rename(s.auditPath(), seg); err != nil {
			return fmt.Errorf("audit retention: %w", err)
		}
		_, _ = s.indexOf(seg)
		return nil
	}
	// Appends wait for the rotation (one fsync); the log goes on in a new file.
	if err := s.auditLog.Rotate(seg); err != nil {
		_ = s.auditLog.Close()
		s.auditLog = nil // the next append opens the log afresh
		return fmt.Errorf("audit retention: %w", err)
	}
	_, _ = s.indexOf(seg) // pages need not read it to find it does not hold them
	return nil
}

// segmentIndex is what a sealed segment holds, kept beside it in
// <segment>.idx: an audit page reads only the segments whose entries may
// be on it.
type segmentIndex struct {
	First    time.Time           `json:"first"`
	Last     time.Time           `json:"last"`
	Accounts map[string]struct{} `json:"accounts"`
}

// indexOf returns a segment's index, reading its .idx or, when that is
// missing, the segment itself (and writing the .idx). auditMu is held.
func (s *Store) indexOf(seg string) (segmentIndex, error) {
	if ix, ok := s.auditIndex[seg]; ok {
		return ix, nil
	}
	var ix segmentIndex
	if b, err := os.ReadFile(seg + ".idx"); err == nil && json.Unmarshal(b, &ix) == nil && ix.Accounts != nil {
		s.auditIndex[seg] = ix
		return ix, nil
	}
	f, err := os.Open(seg)
	if err != nil {
		return ix, err
	}
	defer f.Close()
	ix.Accounts = map[string]struct{}{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e struct {
			Time      time.Time `json:"time"`
			AccountID string    `json:"accountId"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if ix.First.IsZero() || e.Time.Before(ix.First) {
			ix.First = e.Time
		}
		if e.Time.After(ix.Last) {
			ix.Last = e.Time
		}
		ix.Accounts[e.AccountID] = struct{}{}
	}
	if err := sc.Err(); err != nil {
		return ix, err
	}
	if b, err := json.Marshal(ix); err == nil {
		_ = os.WriteFile(seg+".idx", b, 0o600) // without it the next start reads the segment again
	}
	s.auditIndex[seg] = ix
	return ix, nil
}

// readAudit adds to byID the entries of q's account from every file of
// the audit log that may hold entries of q's page, oldest first, and stops
// once later segments cannot: their entries all come after the page's
// last. auditMu is held.
func (s *Store) readAudit(q keys.AuditQuery, byID map[string]contract.AuditEntry) error {
	segs, err := s.segments()
	if err != nil {
		return err
	}
	from := q.Since
	if q.AfterTime.After(from) && !q.Newest {
		from = q.AfterTime
	}
	for i, seg := range segs {
		ix, err := s.indexOf(seg)
		if err != nil {
			return err
		}
		if _, ok := ix.Accounts[q.AccountID]; !ok || ix.Last.Before(from) || !ix.First.Before(q.Until) {
			continue
		}
		if err := readAuditFile(seg, q.AccountID, byID); err != nil {
			return err
		}
		next := time.Time{} // the live log's entries may be any time
		if i+1 < len(segs) {
			nix, err := s.indexOf(segs[i+1])
			if err != nil {
				return err
			}
			next = nix.First
		}
		if last, full := pageEnd(byID, q); !q.Newest && full && !next.IsZero() && next.After(last) {
			return nil
		}
	}
	return readAuditFile(s.auditPath(), q.AccountID, byID)
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
