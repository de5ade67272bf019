package keys

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// AuditRetention bounds the audit trail a key store keeps (DESIGN §13):
// entries older than MaxAge, and the oldest beyond MaxBytes, are dropped,
// oldest first.
type AuditRetention struct {
	MaxAge   time.Duration // PERPGATE_AUDIT_RETENTION, default 2160h (90 days)
	MaxBytes int64         // PERPGATE_AUDIT_MAX_MB, default 1024 MB
}

// DefaultAuditRetention is 90 days and 1 GB.
func DefaultAuditRetention() AuditRetention {
	return AuditRetention{MaxAge: 2160 * time.Hour, MaxBytes: 1024 << 20}
}

// LoadAuditRetention reads PERPGATE_AUDIT_RETENTION (a Go duration) and
// PERPGATE_AUDIT_MAX_MB (whole megabytes) over the defaults.
func LoadAuditRetention(lookup func(string) (string, bool)) (AuditRetention, error) {
	r := DefaultAuditRetention()
	var errs []error
	if v, ok := lookup("PERPGATE_AUDIT_RETENTION"); ok && v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Hour {
			errs = append(errs, fmt.Errorf("PERPGATE_AUDIT_RETENTION: %q is not a Go duration of at least 1h (e.g. 2160h for 90 days)", v))
		} else {
			r.MaxAge = d
		}
	}
	if v, ok := lookup("PERPGATE_AUDIT_MAX_MB"); ok && v != "" {
		mb, err := strconv.ParseInt(v, 10, 64)
		if err != nil || mb < 1 || mb > 1<<30 {
			errs = append(errs, fmt.Errorf("PERPGATE_AUDIT_MAX_MB: %q is not a whole number of megabytes, at least 1", v))
		} else {
			r.MaxBytes = mb << 20
		}
	}
	return r, errors.Join(errs...)
}

// AuditPruner is a Store that enforces an AuditRetention.
type AuditPruner interface {
	// PruneAudit drops the entries older than before, then the oldest
	// until what is left takes at most maxBytes, and returns how many
	// bytes it dropped (an estimate where the store cannot tell exactly).
	PruneAudit(ctx context.Context, before time.Time, maxBytes int64) (int64, error)
}

// pruneEvery is how often the keys service enforces the retention.
const pruneEvery = 5 * time.Minute

// startRetention prunes the store's audit trail now and every pruneEvery
// until the service closes, when the store supports it.
func (s *Service) startRetention(ctx context.Context) {
	p, ok := s.store.(AuditPruner)
	if !ok || s.cfg.AuditRetention == (AuditRetention{}) {
		return
	}
	prune := func() {
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		dropped, err := p.PruneAudit(pctx, s.now().Add(-s.cfg.AuditRetention.MaxAge), s.cfg.AuditRetention.MaxBytes)
		if err != nil {
			s.log.Warn("audit retention not enforced; trying again later", "err", err)
		} else if dropped > 0 {
			s.log.Info("audit entries dropped by retention", "bytes", dropped)
		}
	}
	go func() {
		prune()
		t := time.NewTicker(pruneEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				prune()
			}
		}
	}()
}
