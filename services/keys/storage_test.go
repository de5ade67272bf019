package keys_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/perpgate/perpgate/services/keys/filestore"
	"github.com/perpgate/perpgate/services/keys/postgres"
)

// storedSecrets creates a key and a credential and returns the full key
// and the secret values that must never be found in storage.
func storedSecrets(t *testing.T, f *fixture) (string, []string) {
	t.Helper()
	ctx := context.Background()
	acct := f.account(t, contract.TierPro)
	secret := `{"apiKey":"` + secretAPIKey + `","apiSecret":"` + secretAPISec + `","passphrase":"` + secretPass + `"}`
	if _, err := f.svc.CreateCredential(ctx, acct.ID, keys.CredentialRequest{Exchange: contract.OKX, Env: contract.Mainnet, Secret: json.RawMessage(secret)}); err != nil {
		t.Fatal(err)
	}
	k, err := f.svc.CreateKey(ctx, acct.ID, keys.KeyRequest{Env: contract.KeyEnvLive})
	if err != nil {
		t.Fatal(err)
	}
	return k.Key.Reveal(), []string{secretAPIKey, secretAPISec, secretPass}
}

// assertNoKeyMaterial fails when text holds any 13-character piece of the
// full key (the display is 12) or any secret value.
func assertNoKeyMaterial(t *testing.T, where, text, fullKey string, secrets []string) {
	t.Helper()
	for i := 0; i+13 <= len(fullKey); i++ {
		if strings.Contains(text, fullKey[i:i+13]) {
			t.Fatalf("%s holds %q, part of the full key beyond its display", where, fullKey[i:i+13])
		}
	}
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Fatalf("%s holds the secret value %q in clear", where, s)
		}
	}
}

func TestPostgresHoldsNoKeyMaterial(t *testing.T) {
	pool, _ := testenv.Postgres(t)
	ctx := context.Background()
	store, err := postgres.New(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureOn(t, testConfig(), nil, store, "")
	fullKey, secrets := storedSecrets(t, f)

	for _, table := range []string{"api_keys", "credentials", "accounts"} {
		rows, err := pool.Query(ctx, "SELECT to_jsonb(t)::text FROM "+table+" t")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var row string
			if err := rows.Scan(&row); err != nil {
				t.Fatal(err)
			}
			n++
			assertNoKeyMaterial(t, table, row, fullKey, secrets)
			// sealed is bytea, shown as \x hex: check the decoded form too.
			var cols map[string]any
			if err := json.Unmarshal([]byte(row), &cols); err != nil {
				t.Fatal(err)
			}
			if sealed, ok := cols["sealed"].(string); ok {
				var raw []byte
				if err := pool.QueryRow(ctx, `SELECT decode(substr($1, 3), 'hex')`, sealed).Scan(&raw); err != nil {
					t.Fatal(err)
				}
				assertNoKeyMaterial(t, table+".sealed", string(raw), fullKey, secrets)
			}
			if table == "api_keys" {
				for col, v := range cols {
					s, _ := v.(string)
					if col != "display" && strings.Contains(s, fullKey[:12]) {
						t.Fatalf("api_keys.%s holds the key's display", col)
					}
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("%s is empty", table)
		}
	}
}

func TestFileStoreHoldsNoKeyMaterial(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	store, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureOn(t, testConfig(), nil, store, dir)
	fullKey, secrets := storedSecrets(t, f)

	data, err := os.ReadFile(filepath.Join(dir, filestore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	assertNoKeyMaterial(t, "state file", string(data), fullKey, secrets)
	var st struct {
		Credentials []struct {
			Sealed []byte `json:"sealed"`
		} `json:"credentials"`
	}
	if err := json.Unmarshal(data, &st); err != nil || len(st.Credentials) != 1 {
		t.Fatalf("state file: %v, %d credentials", err, len(st.Credentials))
	}
	assertNoKeyMaterial(t, "sealed secret", string(st.Credentials[0].Sealed), fullKey, secrets)
	assertNoKeyMaterial(t, "logs", f.logs.String(), fullKey, secrets)
}
