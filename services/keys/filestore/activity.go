package filestore

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

func (s *Store) auditPath() string { return filepath.Join(filepath.Dir(s.path), AuditFileName) }

// PutAudit implements keys.Store by appending a line, on disk when it
// returns; concurrent calls share fsyncs. Reads keep the last line per
// request id, and a final entry over a PENDING one, so the order of
// concurrent calls does not matter.
func (s *Store) PutAudit(ctx context.Context, e contract.AuditEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode audit entry: %w", err)
	}
	// The write under auditMu, so a read never meets half a line; the
	// fsync after it, shared with whoever else is waiting.
	s.auditMu.Lock()
	if s.auditLog == nil {
		if s.auditLog, err = appendlog.Open(s.auditPath()); err != nil {
			s.auditMu.Unlock()
			return fmt.Errorf("write audit log: %w", err)
		}
		// Entries wait in the audit stream, not in front of a caller:
		// gathering them keeps their fsyncs off the disk placements wait on.
		s.auditLog.SetLinger(auditLinger)
	}
	log := s.auditLog
	pos, err := log.Write(line)
	s.auditMu.Unlock()
	if err == nil {
		err = log.Sync(pos)
	}
	if err != nil {
		// The log refuses everything after a failed write or fsync; the
		// next call opens it afresh. Nothing is lost meanwhile: an entry
		// not stored is redelivered and written again.
		s.auditMu.Lock()
		if s.auditLog == log {
			_ = log.Close()
			s.auditLog = nil
		}
		s.auditMu.Unlock()
		return fmt.Errorf("write audit log: %w", err)
	}
	return nil
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
	sc := bufio.NewScanner(f)
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
	s.auditMu.Lock()
	byID := map[string]contract.AuditEntry{}
	err := s.readAudit(q, byID)
	s.auditMu.Unlock()
	if err != nil {
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
