package aster

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Adapter implements connector.Adapter on Aster's V3 futures API, whose
// shapes are Binance USDⓈ-M's (package fapi). It holds no venue state,
// only per-host caches: clock offsets, weight budgets, symbol rules,
// position modes and funding intervals.
type Adapter struct {
	*fapi.MarketData // depth, mark price, funding rate, candles
	*fapi.Placer     // orders, cancels, amends, the dead man's switch
	*fapi.Reads      // fees, balance, fills, funding payments

	cfg   Config
	c     *fapi.Client[*keys]
	modes fapi.Modes // hedge mode, by REST base + user + signer
}

var (
	_ connector.Adapter        = (*Adapter)(nil)
	_ connector.LeverageReader = (*Adapter)(nil)
)

// prefix is the REST paths' version.
const prefix = "/fapi/v3"

// NewAdapter returns an adapter for cfg; hc nil means connector.NewHTTPClient.
func NewAdapter(cfg Config, hc *http.Client) *Adapter {
	if hc == nil {
		hc = connector.NewHTTPClient(cfg.Timeout)
	}
	a := &Adapter{cfg: cfg, c: newClient(cfg, hc)}
	// Aster publishes no open interest (fact sheet §0 #6), so market
	// entries leave it out (DESIGN §13).
	a.MarketData = &fapi.MarketData{Venue: "Aster", Prefix: prefix, Call: a.c.Public, Base: a.c.Base, Now: a.c.Now, Lists: a.c, PremiumWeight: 1}
	// Account Information v3 is accountWithJoinMargin (fact sheet §0 #7).
	a.Reads = &fapi.Reads{Signed: a.c.Signed, Fees: prefix + "/commissionRate", Balance: prefix + "/accountWithJoinMargin",
		Trades: prefix + "/userTrades", Income: prefix + "/income", Fill: fillFromWire, Now: a.c.Now}
	a.modes = fapi.Modes{Venue: "Aster", Now: a.c.Now, Key: a.credModeKey, Read: a.readMode}
	// userTrades has no orderId filter (fact sheet §0 #8); the RESULT
	// answer's avgPrice is the fill price, but no answer has the fee (§4).
	// Modify Order (PUT) takes LIMIT orders only, price and quantity
	// together; countdownCancelAll is per symbol (§5).
	a.Placer = &fapi.Placer{Errors: venueErrors, Signed: a.c.Signed, Prefix: prefix, Weight: 1, AnswerPrice: true,
		CheckID: clientIDRule.Check, OneWay: a.modes.OneWay, ForgetMode: a.modes.Forget, Meta: a.c.Meta, Now: a.c.Now,
		Wait:        func(ctx context.Context, d time.Duration) error { return a.c.Wait(ctx, d) },
		Conditional: a.placeStop, Cancel: a.CancelOrder, AmendID: parseOrderID}
	return a
}

// Exchange implements connector.Adapter.
func (a *Adapter) Exchange() contract.Exchange { return contract.Aster }

// GetLeverage implements connector.LeverageReader from positionRisk's
// row for the symbol, which carries the leverage as a string (fact sheet
// §4 getPositions, fapi's GetPositions); 0 (unknown) when Aster lists
// none.
func (a *Adapter) GetLeverage(ctx context.Context, c connector.Credential, m connector.Market) (int, error) {
	rows, err := a.PositionRisk(ctx, c, &m)
	if err != nil {
		return 0, err
	}
	for _, r := range rows {
		if r.Symbol == m.Native && r.Leverage.Given {
			return int(r.Leverage.D().IntPart()), nil
		}
	}
	return 0, nil
}

// TestCredentials implements connector.Adapter with GET
// /fapi/v3/positionSide/dual, a signed read: every signed call checks
// user, signer, key and nonce together (fact sheet §4 testCredentials), so
// a refused one is valid:false with Aster's reason. It also learns the
// position mode.
func (a *Adapter) TestCredentials(ctx context.Context, c connector.Credential) (bool, error) {
	k, err := credKeys(c)
	if err != nil {
		return false, err
	}
	if _, err := a.positionMode(ctx, c, k); err != nil {
		return false, connector.RejectedBy(err)
	}
	return true, nil
}

func modeKey(base string, k *keys) string {
	return base + " " + strings.ToLower(k.user) + " " + k.signer
}

// credModeKey is the key a credential's position mode is cached under.
func (a *Adapter) credModeKey(c connector.Credential) (string, error) {
	k, err := credKeys(c)
	if err != nil {
		return "", err
	}
	return modeKey(a.c.Base(c), k), nil
}

func (a *Adapter) readMode(ctx context.Context, c connector.Credential) (bool, error) {
	k, err := credKeys(c)
	if err != nil {
		return false, err
	}
	return a.positionMode(ctx, c, k)
}

// positionMode reads dualSidePosition (weight 30) and caches it.
func (a *Adapter) positionMode(ctx context.Context, c connector.Credential, k *keys) (bool, error) {
	var res struct {
		DualSidePosition bool `json:"dualSidePosition"`
	}
	base := a.c.Base(c)
	if err := a.c.Do(ctx, base, k, fapi.Request{Method: http.MethodGet, Path: prefix + "/positionSide/dual", Signed: true, Weight: 30}, &res); err != nil {
		return false, err
	}
	a.modes.Put(modeKey(base, k), res.DualSidePosition)
	return res.DualSidePosition, nil
}
