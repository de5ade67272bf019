package admin_test

import (
	"bytes"
	"encoding/base64"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/perpgate/perpgate/services/keys/filestore"
)

const testToken = "admin-token-for-tests-0123456789"

// newServer serves the admin API of a keys.Service on a file store.
func newServer(t *testing.T) (*httptest.Server, *keys.Service, *testenv.Output) {
	t.Helper()
	store, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := keys.DefaultConfig()
	cfg.AdminAddr = ""
	cfg.AdminToken = testToken
	cfg.MasterKey = keys.Masked(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32)))
	logs := &testenv.Output{}
	svc, err := keys.New(cfg, nil, store, slog.New(slog.NewJSONHandler(logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.AdminHandler())
	t.Cleanup(srv.Close)
	return srv, svc, logs
}
