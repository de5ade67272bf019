package filestore

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/perpgate/perpgate/pkg/appendlog"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
)

// AuditFileName is the append-only log of audit entries beside the state
// file: entries are many and never change, so they are not rewritten with
// the state.
const AuditFileName = "audit.jsonl"

// usageDays is how many days of usage counts the file keeps.
const usageDays = 92

// KeyByID implements keys.Store.
func (s *Store) KeyByID(ctx context.Context, id string) (contract.KeyInfo, error) {
	var out contract.KeyInfo
	err := s.view(ctx, func(st *state) error {
		i := slices.IndexFunc(st.Keys, func(k apiKey) bool { return k.ID == id })
		if i < 0 {
			return keys.ErrKeyNotFound
		}
		out = st.keyInfo(st.Keys[i])
		return nil
	})
	return out, err
}

// AddUsage implements keys.Store; days older than usageDays are dropped.
func (s *Store) AddUsage(ctx context.Context, entries []contract.UsageEntry) error {
	return s.update(ctx, func(st *state) error {
		st.Usage = slices.Clone(st.Usage)
		newest := ""
		for _, e := range entries {
			if slices.IndexFunc(st.Keys, func(k apiKey) bool { return k.ID == e.KeyID }) < 0 {
				continue
			}
			newest = max(newest, e.Day)
			i := slices.IndexFunc(st.Usage, func(u contract.UsageEntry) bool {
				return u.KeyID == e.KeyID && u.Day == e.Day && u.Operation == e.Operation
			})
			if i < 0 {
				st.Usage = append(st.Usage, e)
				continue
			}
			st.Usage[i].OK += e.OK
			st.Usage[i].Failed += e.Failed
		}
		if newest != "" {
			st.Usage = slices.DeleteFunc(st.Usage, func(u contract.UsageEntry) bool { return daysBetween(u.Day, newest) > usageDays })
		}
		return nil
	})
}

// Usage implements keys.Store.
func (s *Store) Usage(ctx context.Context, keyID, fromDay string) ([]contract.UsageEntry, error) {
	var out []contract.UsageEntry
	err := s.view(ctx, func(st *state) error {
		for _, u := range st.Usage {
			if u.KeyID == keyID && u.Day >= fromDay {
				out = append(out, u)
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b contract.UsageEntry) int {
		return cmp.Or(cmp.Compare(a.Day, b.Day), cmp.Compare(a.Operation, b.Operation))
	})
	return out, err
}

// auditLinger is how long an audit entry waits for others to share its
// fsync.
const auditLinger = time.Millisecond

// auditSyncLinger is how long the syncer gathers AppendAudit's entries
// before an fsync: at one placement at a time an fsync per entry would
// take the disk from the placements' own fsyncs.
const auditSyncLinger = 10 * time.Millisecond

func (s *Store) auditPath() string { return filepath.Join(filepath.Dir(s.path), AuditFileName) }

// PutAudit implements keys.Store by appending a line, on disk when it
// returns; concurrent calls share fsyncs. Reads keep the last line per
// request id, and a final entry over a PENDING one, so the order of
// concurrent calls does not matter.
func (s *Store) PutAudit(ctx context.Context, e contract.AuditEntry) error {
	log, pos, err := s.writeAudit(ctx, e)
	if err == nil {
		err = log.Sync(pos)
	}
	if err != nil {
		return s.auditFailed(log, err)
	}
	return nil
}

// AppendAudit appends e as PutAudit does but returns once the line is
// written, before its fsync, which a background syncer makes within
// auditLinger, shared with every entry written meanwhile. It answers as
// the audit stream does (JetStream's file store acknowledges a write
// without an fsync), so the standalone edge writes here in its place and
// spares a trading call two stream round trips and the consumer's work.
func (s *Store) AppendAudit(ctx context.Context, e contract.AuditEntry) error {
	log, pos, err := s.writeAudit(ctx, e)
	if err != nil {
		return s.auditFailed(log, err)
	}
	s.syncLater(log, pos)
	return nil
}

// writeAudit writes e's line to the audit log under auditMu, so a read
// never meets half a line, and seals the log once it is a segment's size;
// log is nil when it could not be opened.
func (s *Store) writeAudit(ctx context.Context, e contract.AuditEntry) (log *appendlog.File, pos uint64, err error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	line, err := json.Marshal(e)
	if err != nil {
		return nil, 0, fmt.Errorf("encode audit entry: %w", err)
	}
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	if s.auditLog == nil {
		if s.auditLog, err = appendlog.Open(s.auditPath()); err != nil {
			s.auditLog = nil
			return nil, 0, err
		}
		// Entries wait in the audit stream (or the syncer), not in front of
		// a caller: gathering them keeps their fsyncs off the disk
		// placements wait on.
		s.auditLog.SetLinger(auditLinger)
	}
	log = s.auditLog
	if pos, err = log.Write(line); err != nil {
		s.live.complete = false // what reached the file is unknown
		return log, pos, err
	}
	s.live.add(indexEntry{Time: e.Time, AccountID: e.AccountID, RequestID: e.RequestID, Code: e.Code}, int64(len(line)+1))
	if s.live.bytes >= s.auditSegBytes {
		// The entry is written: a failed seal fails the appends after it,
		// which open the log afresh, not this one.
		_ = s.sealLive(s.live.newest(time.Now()))
	}
	return log, pos, nil
}

// auditFailed closes log after a failed write or fsync: it refuses
// everything after one, and the next call opens it afresh. Nothing is
// lost meanwhile: an entry not stored is redelivered (or its caller
// refused) and written again.
func (s *Store) auditFailed(log *appendlog.File, err error) error {
	if log != nil {
		s.auditMu.Lock()
		if s.auditLog == log {
			_ = log.Close()
			s.auditLog = nil
		}
		s.auditMu.Unlock()
	}
	return fmt.Errorf("write audit log: %w", err)
}

// syncLater has the background syncer make log durable up to pos.
func (s *Store) syncLater(log *appendlog.File, pos uint64) {
	s.syncMu.Lock()
	if log != s.syncLog || pos > s.syncPos {
		s.syncLog, s.syncPos = log, pos
	}
	if !s.syncing {
		s.syncing = true
		s.syncIdle.Add(1)
		go s.syncAudit()
	}
	s.syncMu.Unlock()
}

// syncAudit fsyncs what AppendAudit wrote until nothing is left; the
// log's linger gathers the entries of one fsync.
func (s *Store) syncAudit() {
	defer s.syncIdle.Done()
	var done uint64
	var doneLog *appendlog.File
	for {
		s.syncMu.Lock()
		log, pos := s.syncLog, s.syncPos
		if log == doneLog && pos <= done {
			s.syncing = false
			s.syncMu.Unlock()
			return
		}
		s.syncMu.Unlock()
		time.Sleep(auditSyncLinger)
		if err := log.Sync(pos); err != nil {
			_ = s.auditFailed(log, err)
		}
		doneLog, done = log, pos
	}
}

// readAuditFile adds the entries of account in the log file at path to
// byID, a final entry over a PENDING one; a missing file has none.
func readAuditFile(path, account string, byID map[string]contract.AuditEntry) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return readAuditEntries(f, account, byID)
}

// readAuditEntries adds the entries of account read from r to byID, as
// readAuditFile does.
func readAuditEntries(r io.Reader, account string, byID map[string]contract.AuditEntry) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e contract.AuditEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.AccountID != account {
			continue // a torn last line after a crash, or another account
		}
		if prev, ok := byID[e.RequestID]; ok && e.Code == contract.AuditPending && prev.Code != contract.AuditPending {
			continue
		}
		byID[e.RequestID] = e
	}
	return sc.Err()
}

// Audit implements keys.Store by reading the log.
func (s *Store) Audit(ctx context.Context, q keys.AuditQuery) ([]contract.AuditEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	byID := map[string]contract.AuditEntry{}
	if err := s.readAudit(q, byID); err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	out := []contract.AuditEntry{}
	for _, e := range byID {
		if onPage(e, q) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b contract.AuditEntry) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.RequestID, b.RequestID))
	})
	if q.Newest {
		slices.Reverse(out)
	}
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}
