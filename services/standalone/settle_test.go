package standalone

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys/filestore"
)

// TestPendingAuditSettledAtStart: a placement acknowledged while its
// outcome could not be written (a full disk) stays PENDING in the audit
// trail; the next start settles it from the idempotency records with the
// order it placed.
func TestPendingAuditSettledAtStart(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, func(c *Config) { c.DataDir = dir })
	placed := g.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01",
		"price": "50000", "clientOrderId": "settle-1"})
	acct := g.Bootstrap().AccountID
	var entry contract.AuditEntry
	testenv.Poll(t, "the placement's final audit entry", 5*time.Second, func() error {
		page, err := g.Keys().AuditLog(context.Background(), acct, time.Time{}, time.Time{}, 100, "", false)
		for _, e := range page.Entries {
			if e.Operation == contract.OpPlaceLimitOrder && e.Code == "OK" {
				entry = e
				return nil
			}
		}
		return fmt.Errorf("%v %+v", err, page.Entries)
	})
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	// Leave the audit log as a full disk did: the PENDING entry without its outcome.
	path := filepath.Join(dir, filestore.AuditFileName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.Contains(l, entry.RequestID) || strings.Contains(l, `"code":"`+contract.AuditPending+`"`) {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(kept, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	again := startGateway(t, func(c *Config) { c.DataDir = dir })
	testenv.Poll(t, "the PENDING entry settled", 10*time.Second, func() error {
		page, err := again.Keys().AuditLog(context.Background(), acct, time.Time{}, time.Time{}, 100, "", false)
		for _, e := range page.Entries {
			if e.RequestID == entry.RequestID {
				if e.Code != "OK" || len(e.OrderIDs) != 1 || e.OrderIDs[0] != placed["orderId"] {
					return fmt.Errorf("entry %s: %s %v", e.RequestID, e.Code, e.OrderIDs)
				}
				return nil
			}
		}
		return fmt.Errorf("%v: entry %s missing", err, entry.RequestID)
	})
}
