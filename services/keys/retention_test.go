package keys_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys"
)

func TestLoadAuditRetention(t *testing.T) {
	env := func(kv map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
	}
	r, err := keys.LoadAuditRetention(env(nil))
	if err != nil || r.MaxAge != 2160*time.Hour || r.MaxBytes != 1024<<20 {
		t.Fatalf("defaults: %+v %v", r, err)
	}
	r, err = keys.LoadAuditRetention(env(map[string]string{"PERPGATE_AUDIT_RETENTION": "720h", "PERPGATE_AUDIT_MAX_MB": "64"}))
	if err != nil || r.MaxAge != 720*time.Hour || r.MaxBytes != 64<<20 {
		t.Fatalf("set: %+v %v", r, err)
	}
	_, err = keys.LoadAuditRetention(env(map[string]string{"PERPGATE_AUDIT_RETENTION": "90d", "PERPGATE_AUDIT_MAX_MB": "-1"}))
	if err == nil || !strings.Contains(err.Error(), "PERPGATE_AUDIT_RETENTION") || !strings.Contains(err.Error(), "PERPGATE_AUDIT_MAX_MB") {
		t.Fatalf("bad values: %v, want both named", err)
	}
}

// prunedStore records the retention the service asks it to enforce.
type prunedStore struct {
	keys.Store
	calls chan [2]int64
}

func (p *prunedStore) PruneAudit(_ context.Context, before time.Time, maxBytes int64) (int64, error) {
	p.calls <- [2]int64{before.Unix(), maxBytes}
	return 0, nil
}

// TestServicePrunesAuditAtStart: the keys service enforces the configured
// retention on its store as it starts.
func TestServicePrunesAuditAtStart(t *testing.T) {
	srv := testenv.EmbeddedNATS(t)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	cfg := testConfig()
	cfg.SubjectPrefix = testenv.Prefix(t)
	cfg.AuditRetention = keys.AuditRetention{MaxAge: 48 * time.Hour, MaxBytes: 5 << 20}
	base := newFixture(t, cfg, nc)
	store := &prunedStore{Store: base.store, calls: make(chan [2]int64, 4)}
	f := newFixtureOn(t, cfg, nc, store, base.dir)
	if err := f.svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-store.calls:
		if want := f.clock.Now().Add(-48 * time.Hour).Unix(); got[0] != want || got[1] != 5<<20 {
			t.Fatalf("pruned before %d keeping %d bytes, want before %d keeping %d", got[0], got[1], want, 5<<20)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the service did not enforce the audit retention at start")
	}
}
