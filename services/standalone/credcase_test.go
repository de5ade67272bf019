package standalone

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
)

// TestCredentialIDCase: a credentialId in upper case is the same
// credential as in lower case, everywhere: allowedCredentials, the edge's
// credential cache (a deletion reaches it), the clientOrderId idempotency
// records and the audit trail. The edge brings it to one spelling once.
func TestCredentialIDCase(t *testing.T) {
	g := startGateway(t)
	acct := g.Bootstrap().AccountID
	lower := g.newCredential(acct, contract.Paper, contract.Testnet, `{"startingBalance":"10000"}`)
	upper := strings.ToUpper(lower)
	scoped := g.newKey(acct, keys.KeyRequest{Env: contract.KeyEnvTest, AllowedCredentials: []string{lower}})

	t.Run("allowedCredentials", func(t *testing.T) {
		r := g.call(scoped, map[string]any{"operation": "getBalance", "credentialId": upper})
		if r.status != 200 {
			t.Fatalf("a key allowed %s refused it spelled %s: %d %s", lower, upper, r.status, r.raw)
		}
	})

	t.Run("idempotency and audit", func(t *testing.T) {
		order := map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01",
			"price": "1000", "clientOrderId": "case-test-1"}
		key := g.Bootstrap().APIKey // no allowedCredentials: the records alone decide
		first := g.call(key, withCred(order, upper))
		again := g.call(key, withCred(order, lower))
		if first.status != 200 || again.status != 200 || first.body["orderId"] != again.body["orderId"] {
			t.Fatalf("one clientOrderId on one credential placed twice: %s then %s", first.raw, again.raw)
		}
		// A refused call is audited with the credential as the client sent it.
		refused := withCred(order, upper)
		refused["size"], refused["clientOrderId"] = "-1", "case-test-2"
		if r := g.call(key, refused); r.code() != string(contract.CodeInvalidRequest) {
			t.Fatalf("a negative size: %d %s", r.status, r.raw)
		}
		checkFor(t, 5*time.Second, 50*time.Millisecond, func() error {
			page, err := g.Keys().AuditLog(context.Background(), acct, time.Time{}, time.Time{}, 50, "", false)
			if err != nil {
				return err
			}
			n := 0
			for _, e := range page.Entries {
				if e.Operation != contract.OpPlaceLimitOrder {
					continue
				}
				if e.CredentialID != lower {
					t.Fatalf("audit entry names credential %q, want %q", e.CredentialID, lower)
				}
				n++
			}
			if n < 3 {
				return errors.New("placements not audited yet")
			}
			return nil
		})
	})

	t.Run("a deletion reaches every spelling", func(t *testing.T) {
		key := g.Bootstrap().APIKey
		if r := g.call(key, map[string]any{"operation": "getBalance", "credentialId": upper}); r.status != 200 {
			t.Fatalf("before deletion: %d %s", r.status, r.raw)
		}
		if err := g.Keys().DeleteCredential(context.Background(), lower); err != nil {
			t.Fatal(err)
		}
		checkFor(t, 2*time.Second, 20*time.Millisecond, func() error {
			if r := g.call(key, map[string]any{"operation": "getBalance", "credentialId": upper}); r.code() != string(contract.CodeCredentialNotFound) {
				return errors.New("a deleted credential still answers spelled in upper case: " + string(r.raw))
			}
			return nil
		})
	})
}

func withCred(body map[string]any, cred string) map[string]any {
	out := map[string]any{"credentialId": cred}
	for k, v := range body {
		out[k] = v
	}
	return out
}
