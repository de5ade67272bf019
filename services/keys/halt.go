package keys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
)

// The kill switch (DESIGN §13): POST /admin/v1/keys/{id}/halt.

// OpHalt names the halt in the audit trail: one entry for the key, one per
// credential it worked on.
const OpHalt = "haltKey"

const (
	// haltBudget bounds a whole halt, under the admin server's 30 s write
	// timeout; a credential not done by then reports EXCHANGE_TIMEOUT.
	haltBudget = 25 * time.Second
	// haltCallTimeout bounds one connector call of a halt.
	haltCallTimeout = 10 * time.Second
)

// HaltKey makes a key read-only at once (stored, and a change event so
// every edge drops its copy before this returns) and, when asked, cancels
// the open orders and closes the positions on the credentials the key may
// use (haltScope), asking their connectors over NATS. A credential that
// fails reports its error and does not stop the others. API_KEY_NOT_FOUND
// when there is no such key. Undo with PATCH readOnly:false.
func (s *Service) HaltKey(ctx context.Context, keyID string, req contract.HaltRequest) (contract.HaltResult, error) {
	start := s.now()
	k, err := s.UpdateKeyGuards(ctx, keyID, map[string]json.RawMessage{"readOnly": json.RawMessage("true")})
	if err != nil {
		return contract.HaltResult{}, err
	}
	s.auditHalt(ctx, k, nil, req, contract.CredentialHalt{}, start)
	creds, err := s.haltScope(ctx, k)
	if err != nil {
		return contract.HaltResult{}, err
	}
	res := contract.HaltResult{ID: k.ID, ReadOnly: true, Credentials: make([]contract.CredentialHalt, len(creds))}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), haltBudget)
	defer cancel()
	var wg sync.WaitGroup
	for i, c := range creds {
		wg.Go(func() {
			began := s.now()
			res.Credentials[i] = s.haltCredential(hctx, k, c, req)
			s.auditHalt(ctx, k, &c, req, res.Credentials[i], began)
		})
	}
	wg.Wait()
	s.log.InfoContext(ctx, "key halted", "key_id", k.ID, "key_prefix", k.Display, "account_id", k.AccountID,
		"credentials", len(creds), "cancel_orders", req.CancelOrders, "close_positions", req.ClosePositions)
	return res, nil
}

// haltScope is the credentials a key may use: its allowedCredentials, else
// every credential of its account, in the key's environment (live:
// mainnet, test: testnet) and narrowed by allowedExchanges.
func (s *Service) haltScope(ctx context.Context, k contract.KeyInfo) ([]contract.CredentialInfo, error) {
	all, err := s.store.Credentials(ctx, k.AccountID)
	if err != nil {
		return nil, s.storeError("halt key", k.AccountID, err)
	}
	var out []contract.CredentialInfo
	for _, c := range all {
		if k.MayUse(c.Info) {
			out = append(out, c.Info)
		}
	}
	return out, nil
}

// haltCredential cancels the orders, then closes the positions, on one
// credential, market by market, in the key's allowedMarkets only. It goes
// on past a failed market and reports the first error.
func (s *Service) haltCredential(ctx context.Context, k contract.KeyInfo, c contract.CredentialInfo, req contract.HaltRequest) contract.CredentialHalt {
	out := contract.CredentialHalt{CredentialID: c.ID}
	fail := func(err error) {
		if out.Error == nil {
			out.Error = s.connectorError(ctx, c, err)
		}
	}
	if req.CancelOrders {
		var orders contract.OrdersResult
		if err := s.callConnector(ctx, k, c, contract.OpGetOrders, contract.MarketFilterParams{}, &orders); err != nil {
			fail(err)
		}
		for _, m := range haltMarkets(k.Guards, orders.Orders, func(o contract.Order) (string, bool) { return o.Market, true }) {
			var r contract.CancelAllResult
			if err := s.callConnector(ctx, k, c, contract.OpCancelAllOrders, contract.MarketParams{Market: m}, &r); err != nil {
				fail(err)
				continue
			}
			out.CancelledOrders += r.CancelledCount
		}
	}
	if req.ClosePositions {
		var pos contract.PositionsResult
		if err := s.callConnector(ctx, k, c, contract.OpGetPositions, contract.MarketFilterParams{}, &pos); err != nil {
			fail(err)
		}
		for _, m := range haltMarkets(k.Guards, pos.Positions, func(p contract.Position) (string, bool) { return p.Market, !p.Size.IsZero() }) {
			var r contract.CloseAllResult
			if err := s.callConnector(ctx, k, c, contract.OpCloseAllPositions, contract.MarketParams{Market: m}, &r); err != nil {
				fail(err)
				continue
			}
			if !r.ClosedSize.IsZero() {
				out.ClosedPositions++
			}
		}
	}
	return out
}

// haltMarkets lists, once each and in order, the markets of items that
// count (market returns false for those that do not) and that the key's
// allowedMarkets cover.
func haltMarkets[T any](g contract.Guards, items []T, market func(T) (string, bool)) []string {
	var out []string
	for _, it := range items {
		m, ok := market(it)
		if ok && g.AllowsMarket(m) && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// callConnector sends one operation to the connector of c's exchange, as
// the edge does, on behalf of key k's account, and decodes the result.
func (s *Service) callConnector(ctx context.Context, k contract.KeyInfo, c contract.CredentialInfo, opName string, params, result any) error {
	if s.nc == nil {
		return bus.ErrDisconnected
	}
	op, ok := contract.Lookup(opName)
	if !ok {
		return fmt.Errorf("halt: no operation %s", opName)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("halt: encode %s: %w", opName, err)
	}
	cctx, cancel := context.WithTimeout(ctx, haltCallTimeout)
	defer cancel()
	req := contract.ConnectorRequest{RequestID: newID(), Operation: op.Name, AccountID: k.AccountID, Credential: c, Params: raw}
	return bus.RequestConnector(cctx, s.nc, s.subjects.Operation(c.Exchange, op), req, result)
}

// connectorError is the contract error a halt reports for a failed
// connector call; a fault of the gateway is logged and reported as
// INTERNAL_ERROR.
func (s *Service) connectorError(ctx context.Context, c contract.CredentialInfo, err error) *contract.Error {
	var ce *contract.Error
	switch {
	case errors.As(err, &ce):
		return ce
	case bus.IsDisconnected(err):
		return contract.Errorf(contract.CodeServiceUnavailable, "the gateway's message bus (NATS) is unreachable; halt again to retry")
	case bus.IsNoResponders(err):
		return contract.Errorf(contract.CodeExchangeUnavailable, "no %s connector is running; halt again once it is", c.Exchange)
	case bus.IsTimeout(err):
		return contract.Errorf(contract.CodeExchangeTimeout, "%s did not answer in time; halt again, then check the orders and positions", c.Exchange)
	}
	s.log.ErrorContext(ctx, "halt: connector call failed", "credential_id", c.ID, "exchange", c.Exchange, "err", err)
	return &contract.Error{Code: contract.CodeInternal, Message: contract.InternalMessage}
}

// auditHalt stores the audit entry of a halt: for the key (c nil) or for
// one credential, with what was done there. A failure to store is logged:
// the halt itself has happened.
func (s *Service) auditHalt(ctx context.Context, k contract.KeyInfo, c *contract.CredentialInfo, req contract.HaltRequest, done contract.CredentialHalt, began time.Time) {
	params, _ := json.Marshal(req)
	e := contract.AuditEntry{
		Time: s.clock(), RequestID: newID(), AccountID: k.AccountID, KeyID: k.ID, KeyDisplay: k.Display,
		Operation: OpHalt, Params: params, Code: "OK", OrderIDs: []string{}, Via: "admin",
		DurationMs: float64(s.now().Sub(began).Microseconds()) / 1000,
		Message:    "key made read-only",
	}
	if c != nil {
		e.CredentialID, e.Exchange = c.ID, c.Exchange
		e.Message = fmt.Sprintf("%d orders cancelled, %d positions closed", done.CancelledOrders, done.ClosedPositions)
		if done.Error != nil {
			e.Code, e.Message = string(done.Error.Code), e.Message+"; "+done.Error.Message
		}
	}
	if err := s.store.PutAudit(context.WithoutCancel(ctx), e); err != nil {
		s.log.ErrorContext(ctx, "halt audit entry not stored", "key_id", k.ID, "err", err)
	}
}
