package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
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

// auditFiles returns every file of the audit log, oldest first.
func (s *Store) auditFiles() ([]string, error) {
	segs, err := s.segments()
	return append(segs, s.auditPath()), err
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
		return nil
	}
	// Appends wait for the rotation (one fsync); the log goes on in a new file.
	if err := s.auditLog.Rotate(seg); err != nil {
		_ = s.auditLog.Close()
		s.auditLog = nil // the next append opens the log afresh
		return fmt.Errorf("audit retention: %w", err)
	}
	return nil
}
