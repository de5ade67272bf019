package aster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// Account events come from the listen-key user data stream (fact sheet
// §12.2): POST /fapi/v3/listenKey (signed like any request) gives the key,
// wss://<stream host>/ws/<listenKey> streams ORDER_TRADE_UPDATE and
// ACCOUNT_UPDATE, and PUT /fapi/v3/listenKey keeps the key alive (60 min
// without it).

var _ connector.AccountFeeder = (*Adapter)(nil)

// keepAliveEvery is how often the listen key is extended: well inside
// its 60 minutes.
var keepAliveEvery = 30 * time.Minute

// FollowAccount implements connector.AccountFeeder. A credential Aster
// refuses fails the listen-key request with AUTHENTICATION_FAILED (-2015,
// -1022); the socket opening on the key is the subscription's
// confirmation. It returns when ctx ends, the socket drops, the key
// expires or a keep-alive fails.
func (a *Adapter) FollowAccount(ctx context.Context, c connector.Credential, ready func(), emit func(connector.AccountEvent)) error {
	k, err := credKeys(c)
	if err != nil {
		return contract.Upstream(contract.ReasonAuthenticationFailed, "", "", "the stored Aster secret is not usable (userAddress, signerPrivateKey): replace the credential")
	}
	return fapi.UserStream{Venue: "Aster", URL: func(key string) string { return a.cfg.streamURL(c.Environment) + "/ws/" + key },
		Listen: func(ctx context.Context, method string) (string, error) { return a.listenKey(ctx, c, k, method) },
		Every:  keepAliveEvery, Frame: func(data []byte) error { return emitAll(data, emit) }}.Follow(ctx, ready)
}

// emitAll emits the events of one user data frame.
func emitAll(data []byte, emit func(connector.AccountEvent)) error {
	evs, err := accountEvents(data)
	for _, ev := range evs {
		emit(ev)
	}
	return err
}

// listenKey creates (POST) or extends (PUT) the account's listen key.
func (a *Adapter) listenKey(ctx context.Context, c connector.Credential, k *keys, method string) (string, error) {
	var res struct {
		ListenKey string `json:"listenKey"`
	}
	err := a.c.do(ctx, a.base(c), k, request{method: method, path: "/fapi/v3/listenKey", signed: true, weight: 1}, &res)
	if err == nil && method == http.MethodPost && res.ListenKey == "" {
		err = contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "Aster answered POST /fapi/v3/listenKey without a listenKey")
	}
	return res.ListenKey, err
}

// userFrame holds the fields of the user data events. Keys differing only
// in case are all declared: encoding/json would otherwise match one to
// the other's field.
type userFrame struct {
	Event   string         `json:"e"`
	Time    int64          `json:"E"`
	TxTime  int64          `json:"T"`
	Order   *orderUpdate   `json:"o"`
	Account *accountUpdate `json:"a"`
}

// orderUpdate is ORDER_TRADE_UPDATE's o (fact sheet §12.2).
type orderUpdate struct {
	Symbol      string            `json:"s"`
	Side        string            `json:"S"`
	ClientID    string            `json:"c"`
	Type        string            `json:"o"`
	TimeInForce string            `json:"f"`
	Qty         decimal.Decimal   `json:"q"`
	Price       decimal.Decimal   `json:"p"`
	AvgPrice    decimal.Decimal   `json:"ap"`
	StopPrice   decimal.Decimal   `json:"sp"`
	ExecType    string            `json:"x"`
	Status      string            `json:"X"`
	OrderID     connector.Int     `json:"i"`
	LastQty     decimal.Decimal   `json:"l"`
	LastPrice   decimal.Decimal   `json:"L"`
	Filled      decimal.Decimal   `json:"z"`
	FeeAsset    string            `json:"N"`
	Fee         decimal.Decimal   `json:"n"`
	TradeTime   int64             `json:"T"`
	TradeID     connector.Int     `json:"t"`
	Maker       bool              `json:"m"`
	ReduceOnly  bool              `json:"R"`
	Realized    connector.Decimal `json:"rp"`
}

// accountUpdate is ACCOUNT_UPDATE's a: m the reason, B balances, P
// positions.
type accountUpdate struct {
	Reason   string `json:"m"`
	Balances []struct {
		Asset  string            `json:"a"`
		Wallet connector.Decimal `json:"wb"`
		Change connector.Decimal `json:"bc"`
	} `json:"B"`
	Positions []struct {
		Symbol     string            `json:"s"`
		Amount     decimal.Decimal   `json:"pa"`
		Entry      decimal.Decimal   `json:"ep"`
		Unrealized connector.Decimal `json:"up"`
	} `json:"P"`
}

// accountEvents turns one user data frame into account events. A
// listenKeyExpired frame is an error: nothing more comes on this key.
func accountEvents(data []byte) ([]connector.AccountEvent, error) {
	var f userFrame
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("aster user data frame: %w", err)
	}
	at := time.UnixMilli(f.Time)
	switch {
	case f.Event == "listenKeyExpired":
		return nil, errors.New("aster listen key expired")
	case f.Event == "ORDER_TRADE_UPDATE" && f.Order != nil:
		return orderEvents(at, f.Order), nil
	case f.Event == "ACCOUNT_UPDATE" && f.Account != nil:
		return accountChange(at, f.Account), nil
	}
	return nil, nil // MARGIN_CALL, ACCOUNT_CONFIG_UPDATE, announcements
}

func orderEvents(at time.Time, o *orderUpdate) []connector.AccountEvent {
	id := strconv.FormatInt(int64(o.OrderID), 10)
	ev := contract.OrderEvent{OrderID: id, ClientOrderID: o.ClientID, Market: o.Symbol, Side: contract.Side(o.Side),
		Type: o.Type, Size: o.Qty, FilledSize: o.Filled, ReduceOnly: o.ReduceOnly,
		Status: orderStatus(order{Status: o.Status, Type: o.Type, ExecutedQty: o.Filled})}
	ev.Price, ev.TriggerPrice, ev.AvgPrice = positive(o.Price), positive(o.StopPrice), positive(o.AvgPrice)
	if o.Status == "EXPIRED" {
		ev.Reason = "expired"
		if o.TimeInForce == "GTX" && o.Filled.IsZero() {
			ev.Reason = "post_only_would_take"
		}
	}
	out := []connector.AccountEvent{{Time: at, Data: ev}}
	if o.ExecType == "TRADE" && o.LastQty.IsPositive() {
		fill := contract.FillEvent{FillID: strconv.FormatInt(int64(o.TradeID), 10), OrderID: id, ClientOrderID: o.ClientID,
			Market: o.Symbol, Side: contract.Side(o.Side), Size: o.LastQty, Price: o.LastPrice, Fee: o.Fee.Abs(),
			FeeAsset: o.FeeAsset, Liquidity: "TAKER", Timestamp: o.TradeTime / 1000}
		if o.Maker {
			fill.Liquidity = "MAKER"
		}
		if o.Realized.Given {
			fill.RealizedPnl = new(o.Realized.D())
		}
		out = append(out, connector.AccountEvent{Time: at, Data: fill})
	}
	return out
}

// accountChange reads ACCOUNT_UPDATE. A FUNDING_FEE update is a funding
// payment (its balance change on the position's symbol); others carry
// positions and wallet balances. Aster pushes no available balance
// (issue #115), so balance events hold the wallet balance only.
func accountChange(at time.Time, a *accountUpdate) []connector.AccountEvent {
	var out []connector.AccountEvent
	if a.Reason == "FUNDING_FEE" {
		for _, p := range a.Positions {
			amount := decimal.Zero
			for _, b := range a.Balances {
				amount = amount.Add(b.Change.D())
			}
			out = append(out, connector.AccountEvent{Time: at, Data: contract.FundingEvent{Market: p.Symbol, Amount: amount}})
			break
		}
		return out
	}
	for _, p := range a.Positions {
		side := contract.Long
		switch {
		case p.Amount.IsZero():
			side = contract.PositionFlat
		case p.Amount.IsNegative():
			side = contract.Short
		}
		ev := contract.PositionEvent{Market: p.Symbol, Side: side, Size: p.Amount.Abs(), EntryPrice: p.Entry}
		if p.Unrealized.Given {
			ev.UnrealizedPnl = new(p.Unrealized.D())
		}
		out = append(out, connector.AccountEvent{Time: at, Data: ev})
	}
	for _, b := range a.Balances {
		if b.Wallet.Given {
			out = append(out, connector.AccountEvent{Time: at, Data: contract.BalanceEvent{Asset: b.Asset, WalletBalance: new(b.Wallet.D())}})
		}
	}
	return out
}

func positive(d decimal.Decimal) *decimal.Decimal {
	if !d.IsPositive() {
		return nil
	}
	return &d
}
