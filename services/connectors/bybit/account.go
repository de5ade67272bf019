package bybit

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

var _ connector.AccountFeeder = (*Adapter)(nil)

// Private websockets (https://bybit-exchange.github.io/docs/v5/ws/connect;
// demo: https://bybit-exchange.github.io/docs/v5/demo): one per host, as
// the credential's REST host.
const (
	MainnetPrivateURL = "wss://stream.bybit.com/v5/private"
	TestnetPrivateURL = "wss://stream-testnet.bybit.com/v5/private"
	DemoPrivateURL    = "wss://stream-demo.bybit.com/v5/private"
)

// authWindow is how far ahead the auth message's expires lies.
const authWindow = 10 * time.Second

// privateTopics are the all-in-one topics (order, execution, position,
// wallet pages under …/v5/websocket/private/).
var privateTopics = []string{"order", "execution", "position", "wallet"}

// privateURL is the private socket of a credential's host; a REST base
// that is not Bybit's own (a simulator) serves it on the same host.
func (c Config) privateURL(env contract.Environment, demo bool) string {
	base := c.baseURL(env, demo)
	switch base {
	case DefaultMainnetURL:
		return MainnetPrivateURL
	case DefaultTestnetURL:
		return TestnetPrivateURL
	case DefaultDemoURL:
		return DemoPrivateURL
	}
	return venuekit.WSURL(base) + "/v5/private"
}

// FollowAccount implements connector.AccountFeeder: auth, subscribe the
// four topics, then read; a ping every 20 s keeps the socket (connect
// page: "send the ping heartbeat packet every 20 seconds").
func (a *Adapter) FollowAccount(ctx context.Context, c connector.Credential, ready func(), emit func(connector.AccountEvent)) error {
	k, err := credKeys(c)
	if err != nil {
		return err
	}
	expires := strconv.FormatInt(a.c.Host(a.base(c)).clock.Now().Add(authWindow).UnixMilli(), 10)
	return venuekit.PrivateStream{Venue: "Bybit private", Name: "bybit private stream", URL: a.cfg.privateURL(c.Environment, demo(c)),
		Open: []any{map[string]any{"req_id": "auth", "op": "auth", "args": []any{k.Key, expires, authSignature(k.Secret, expires)}},
			map[string]any{"req_id": "subscribe", "op": "subscribe", "args": privateTopics}},
		Ping: []byte(`{"op":"ping","req_id":"ping"}`), Every: pingEvery,
		Frame: func(_ context.Context, _ *venuekit.Socket, data []byte) error { return privateFrame(data, ready, emit) },
	}.Run(ctx)
}

// authSignature is the hex HMAC-SHA256 of "GET/realtime"+expires.
func authSignature(secret, expires string) string {
	return hex.EncodeToString(venuekit.HMACSHA256(secret, "GET/realtime"+expires))
}

func privateFrame(data []byte, ready func(), emit func(connector.AccountEvent)) error {
	var m wsFrame
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("bybit private stream: unreadable frame: %w", err)
	}
	switch m.Op {
	case "auth":
		if !m.Success {
			return contract.Upstream(contract.ReasonAuthenticationFailed, "", m.RetMsg,
				"Bybit refused the private stream's login: %s; check the credential's apiKey and apiSecret, and that the key belongs to this host (mainnet, testnet or demo)", m.RetMsg)
		}
		return nil
	case "subscribe":
		if !m.Success {
			return fmt.Errorf("bybit private stream: subscribe refused: %s", m.RetMsg)
		}
		ready()
		return nil
	case "":
	default:
		return nil // pong
	}
	at := time.UnixMilli(m.CreationTime)
	events, err := pushEvents(m.Topic, m.Data)
	if err != nil {
		return fmt.Errorf("bybit %s push: %w", m.Topic, err)
	}
	for _, e := range events {
		emit(connector.AccountEvent{Time: at, Data: e})
	}
	return nil
}

// orderPush is an order topic row (…/websocket/private/order).
type orderPush struct {
	Category string `json:"category"`
	order
}

// execPush is an execution topic row (…/websocket/private/execution).
type execPush struct {
	Category    string `json:"category"`
	FeeCurrency string `json:"feeCurrency"`
	IsMaker     bool   `json:"isMaker"`
	FeeRate     dec    `json:"feeRate"`
	execution
}

// positionPush is a position topic row (…/websocket/private/position).
type positionPush struct {
	Category      string `json:"category"`
	Symbol        string `json:"symbol"`
	Side          string `json:"side"`
	Size          dec    `json:"size"`
	EntryPrice    dec    `json:"entryPrice"`
	UnrealisedPnl dec    `json:"unrealisedPnl"`
	Leverage      dec    `json:"leverage"`
	LiqPrice      dec    `json:"liqPrice"`
}

// walletPush is a wallet topic row (…/websocket/private/wallet).
type walletPush struct {
	AccountType           string `json:"accountType"`
	TotalEquity           dec    `json:"totalEquity"`
	TotalWalletBalance    dec    `json:"totalWalletBalance"`
	TotalAvailableBalance dec    `json:"totalAvailableBalance"`
}

func pushEvents(topic string, data json.RawMessage) (out []any, err error) {
	add := func(linear bool, e any) {
		if linear && e != nil {
			out = append(out, e)
		}
	}
	switch topic {
	case "order":
		err = venuekit.EachRow(data, func(r orderPush) { add(r.Category == "linear", orderEvent(r.order)) })
	case "execution":
		err = venuekit.EachRow(data, func(r execPush) { add(r.Category == "linear", execEvent(r)) })
	case "position":
		err = venuekit.EachRow(data, func(r positionPush) { add(r.Category == "linear", positionEvent(r)) })
	case "wallet":
		err = venuekit.EachRow(data, func(r walletPush) { add(true, balanceEvent(r)) })
	}
	return out, err
}

// orderEvent: as getOrders reads it, with a venue's own cancel of an
// untouched order (post-only that would take, …) a rejection.
func orderEvent(o order) contract.OrderEvent {
	e := contract.OrderEvent{OrderID: o.OrderID, ClientOrderID: o.OrderLinkID, Market: o.Symbol, Side: sideFromWire(o.Side),
		Type: orderType(o), Size: o.Qty.D(), FilledSize: o.CumExecQty.D(), Status: statusFromWire(o.OrderStatus), ReduceOnly: o.ReduceOnly}
	e.Price, e.TriggerPrice = venuekit.IfPositive(o.Price.D()), venuekit.IfPositive(o.TriggerPrice.D())
	if e.FilledSize.IsPositive() {
		e.AvgPrice = venuekit.IfPositive(o.AvgPrice.D())
	}
	if venueCancelled(o) {
		e.Status, e.Reason = contract.StatusRejected, o.RejectReason
		if o.RejectReason == postOnlyTaken {
			e.Reason = "post_only_would_take"
		}
	}
	return e
}

// execEvent: trades become fills, Funding rows funding (execFee is what
// the account paid, so the amount is its negation); other rows (Settle,
// …) are not account events of ours.
func execEvent(r execPush) any {
	switch r.ExecType {
	case "Trade", "AdlTrade", "BustTrade", "BlockTrade", "MovePosition":
		liq := "TAKER"
		if r.IsMaker {
			liq = "MAKER"
		}
		return contract.FillEvent{FillID: r.ExecID, OrderID: r.OrderID, ClientOrderID: r.OrderLinkID, Market: r.Symbol,
			Side: sideFromWire(r.Side), Size: r.ExecQty.D(), Price: r.ExecPrice.D(), Fee: r.ExecFee.D(), FeeAsset: r.FeeCurrency,
			Liquidity: liq, Timestamp: msToSeconds(r.ExecTime)}
	case "Funding":
		return contract.FundingEvent{Market: r.Symbol, Amount: r.ExecFee.D().Neg(), Rate: venuekit.Given(r.FeeRate), PositionSize: venuekit.Given(r.ExecQty)}
	}
	return nil
}

func positionEvent(p positionPush) contract.PositionEvent {
	e := contract.PositionEvent{Market: p.Symbol, Size: p.Size.D().Abs(), EntryPrice: p.EntryPrice.D()}
	switch {
	case p.Side == "Buy" && e.Size.IsPositive():
		e.Side = contract.Long
	case p.Side == "Sell" && e.Size.IsPositive():
		e.Side = contract.Short
	default:
		e.Side = contract.PositionFlat
	}
	e.UnrealizedPnl, e.Leverage = venuekit.Given(p.UnrealisedPnl), venuekit.Given(p.Leverage)
	e.LiquidationPrice = venuekit.IfPositive(p.LiqPrice.D()) // "" when there is none
	return e
}

// balanceEvent: the unified account's totals, USD-valued, as getBalance
// reads them.
func balanceEvent(w walletPush) contract.BalanceEvent {
	e := contract.BalanceEvent{Asset: "USD"}
	e.Equity, e.FreeCollateral, e.WalletBalance = venuekit.Given(w.TotalEquity), venuekit.Given(w.TotalAvailableBalance), venuekit.Given(w.TotalWalletBalance)
	return e
}
