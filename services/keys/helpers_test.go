package keys_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/perpgate/perpgate/services/keys/filestore"
)

// testMasterKey is a fixed 32-byte master key for tests.
var testMasterKey = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))

const testAdminToken = "test-admin-token-0123456789"

// clock is a settable clock.
func newClock() *testenv.Clock {
	return testenv.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.UTC))
}

func testConfig() keys.Config {
	cfg := keys.DefaultConfig()
	cfg.AdminAddr = ""
	cfg.MasterKey = keys.Masked(testMasterKey)
	cfg.AdminToken = keys.Masked(testAdminToken)
	return cfg
}

// fixture is a Service on a file store with a settable clock and captured logs.
type fixture struct {
	svc   *keys.Service
	store keys.Store
	clock *testenv.Clock
	logs  *testenv.Output
	dir   string
}

func newFixture(t *testing.T, cfg keys.Config, nc *nats.Conn) *fixture {
	t.Helper()
	dir := t.TempDir()
	store, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return newFixtureOn(t, cfg, nc, store, dir)
}

func newFixtureOn(t *testing.T, cfg keys.Config, nc *nats.Conn, store keys.Store, dir string) *fixture {
	t.Helper()
	logs := &testenv.Output{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newClock()
	svc, err := keys.New(cfg, nc, store, log, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return &fixture{svc: svc, store: store, clock: c, logs: logs, dir: dir}
}

func (f *fixture) account(t *testing.T, tier contract.Tier) keys.Account {
	t.Helper()
	a, err := f.svc.CreateAccount(context.Background(), tier, "acme")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// wantCode fails t unless err is a *contract.Error with code (and, when
// msgPart is not empty, a message containing it).
func wantCode(t *testing.T, err error, code contract.Code, msgPart string) *contract.Error {
	t.Helper()
	ce, ok := err.(*contract.Error)
	if !ok {
		t.Fatalf("error = %v (%T), want *contract.Error %s", err, err, code)
	}
	if ce.Code != code {
		t.Fatalf("code = %s (%q), want %s", ce.Code, ce.Message, code)
	}
	if msgPart != "" && !bytes.Contains([]byte(ce.Message), []byte(msgPart)) {
		t.Fatalf("message %q does not contain %q", ce.Message, msgPart)
	}
	return ce
}
