package standalone

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
)

// settleAfter is how long after start the audit trail is settled: the
// keys service first stores what waited in the audit stream.
const settleAfter = 3 * time.Second

// recordLookup finds a placement's idempotency record by its key
// (credential id ":" clientOrderId).
type recordLookup interface {
	Lookup(key string) (connector.Record, bool)
}

// settlePending gives every placement the audit trail of the last 24 h
// still shows PENDING (its outcome was never written: a full disk, a
// crash) the outcome its idempotency records hold, and returns how many
// it settled. A placement without a finished record stays PENDING.
func settlePending(ctx context.Context, store keys.Store, records recordLookup, now time.Time) (int, error) {
	accounts, err := store.ListAccounts(ctx)
	if err != nil {
		return 0, err
	}
	settled := 0
	for _, a := range accounts {
		q := keys.AuditQuery{AccountID: a.ID, Since: now.Add(-connector.IdempotencyTTL), Until: now, Limit: 500, Pending: true}
		for {
			page, err := store.Audit(ctx, q)
			if err != nil {
				return settled, err
			}
			for _, e := range page {
				if e.Code != contract.AuditPending { // a store that does not filter
					continue
				}
				if ids, ok := placedOrders(e, records); ok {
					e.Code, e.OrderIDs = "OK", ids
					e.Message = "settled at start from the placement's idempotency record: its outcome was not written at the time"
					if err := store.PutAudit(ctx, e); err != nil {
						return settled, fmt.Errorf("settle audit entry %s: %w", e.RequestID, err)
					}
					settled++
				}
			}
			if len(page) < q.Limit {
				break
			}
			last := page[len(page)-1]
			q.AfterTime, q.AfterID = last.Time, last.RequestID
		}
	}
	return settled, nil
}

// placedOrders returns the order ids a PENDING placement's records hold,
// and whether every order of it has a finished record.
func placedOrders(e contract.AuditEntry, records recordLookup) ([]string, bool) {
	var p struct {
		ClientOrderID string `json:"clientOrderId"`
		Orders        []struct {
			ClientOrderID string `json:"clientOrderId"`
		} `json:"orders"`
	}
	if e.CredentialID == "" || json.Unmarshal(e.Params, &p) != nil {
		return nil, false
	}
	ids := []string{p.ClientOrderID}
	if len(p.Orders) > 0 {
		ids = ids[:0]
		for _, o := range p.Orders {
			ids = append(ids, o.ClientOrderID)
		}
	}
	orders := []string{}
	for _, id := range ids {
		rec, ok := records.Lookup(e.CredentialID + ":" + id)
		if id == "" || !ok || rec.Pending() {
			return nil, false
		}
		var r struct{ OrderID, TPOrderID, SLOrderID string }
		_ = json.Unmarshal(rec.Result, &r) // matches orderId, tpOrderId, slOrderId
		for _, o := range []string{r.OrderID, r.TPOrderID, r.SLOrderID} {
			if o != "" {
				orders = append(orders, o)
			}
		}
	}
	return orders, true
}

// settleLater runs settlePending once the keys service has had
// settleAfter to store the audit stream's backlog, unless ctx ends first.
func (g *Gateway) settleLater(ctx context.Context, store keys.Store, records recordLookup) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(settleAfter):
	}
	began := time.Now()
	n, err := settlePending(ctx, store, records, began)
	took := time.Since(began).Milliseconds()
	switch {
	case err != nil:
		g.log.Error("PENDING audit entries not settled", "settled", n, "err", err)
	case n > 0:
		g.log.Info("PENDING audit entries settled from the idempotency records", "settled", n, "duration_ms", took)
	default:
		g.log.Debug("no PENDING audit entry to settle", "duration_ms", took)
	}
}
