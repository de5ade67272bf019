package bybit

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
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

// privateSilence is how long the socket may send nothing, pongs included,
// before the feed counts it dead: three missed pings.
const privateSilence = 3 * pingEvery

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
	return "ws" + strings.TrimPrefix(base, "http") + "/v5/private"
}

// FollowAccount implements connector.AccountFeeder: auth, subscribe the
// four topics, then read; a ping every 20 s keeps the socket (connect
// page: "send the ping heartbeat packet every 20 seconds").
func (a *Adapter) FollowAccount(ctx context.Context, c connector.Credential, ready func(), emit func(connector.AccountEvent)) error {
	k, err := credKeys(c)
	if err != nil {
		return err
	}
	ws, err := venuekit.Dial(ctx, "Bybit private", a.cfg.privateURL(c.Environment, demo(c)))
	if err != nil {
		return err
	}
	defer ws.Close()
	expires := strconv.FormatInt(a.c.host(a.base(c)).clock.Now().Add(authWindow).UnixMilli(), 10)
	if err := ws.WriteJSON(ctx, map[string]any{"req_id": "auth", "op": "auth",
		"args": []any{k.apiKey, expires, authSignature(k.secret, expires)}}); err != nil {
		return fmt.Errorf("bybit private stream: %w", err)
	}
	if err := ws.WriteJSON(ctx, map[string]any{"req_id": "subscribe", "op": "subscribe", "args": privateTopics}); err != nil {
		return fmt.Errorf("bybit private stream: %w", err)
	}
	ws.Keepalive(pingEvery, func(ctx context.Context) error {
		return ws.WriteJSON(ctx, map[string]string{"req_id": "ping", "op": "ping"})
	})
	for {
		data, err := ws.ReadWithin(ctx, privateSilence)
		if err != nil {
			return fmt.Errorf("bybit private stream: %w", err)
		}
		if err := privateFrame(data, ready, emit); err != nil {
			return err
		}
	}
}

// authSignature is the hex HMAC-SHA256 of "GET/realtime"+expires.
func authSignature(secret, expires string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("GET/realtime" + expires))
	return hex.EncodeToString(m.Sum(nil))
}

// privateMsg is an op answer or a push.
type privateMsg struct {
	Op           string          `json:"op"`
	Success      bool            `json:"success"`
	RetMsg       string          `json:"ret_msg"`
	Topic        string          `json:"topic"`
	CreationTime int64           `json:"creationTime"`
	Data         json.RawMessage `json:"data"`
}

func privateFrame(data []byte, ready func(), emit func(connector.AccountEvent)) error {
	var m privateMsg
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

func pushEvents(topic string, data json.RawMessage) ([]any, error) {
	var out []any
	switch topic {
	case "order":
		var rows []orderPush
		if err := json.Unmarshal(data, &rows); err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.Category == "linear" {
				out = append(out, orderEvent(r.order))
			}
		}
	case "execution":
		var rows []execPush
		if err := json.Unmarshal(data, &rows); err != nil {
			return nil, err
		}
		for _, r := range rows {
			if e := execEvent(r); r.Category == "linear" && e != nil {
				out = append(out, e)
			}
		}
	case "position":
		var rows []positionPush
		if err := json.Unmarshal(data, &rows); err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.Category == "linear" {
				out = append(out, positionEvent(r))
			}
		}
	case "wallet":
		var rows []walletPush
		if err := json.Unmarshal(data, &rows); err != nil {
			return nil, err
		}
		for _, r := range rows {
			out = append(out, balanceEvent(r))
		}
	}
	return out, nil
}

// orderEvent: as getOrders reads it, with a venue's own cancel of an
// untouched order (post-only that would take, …) a rejection.
func orderEvent(o order) contract.OrderEvent {
	e := contract.OrderEvent{OrderID: o.OrderID, ClientOrderID: o.OrderLinkID, Market: o.Symbol, Side: sideFromWire(o.Side),
		Type: orderType(o), Size: o.Qty.D(), FilledSize: o.CumExecQty.D(), Status: statusFromWire(o.OrderStatus), ReduceOnly: o.ReduceOnly}
	if p := o.Price.D(); p.IsPositive() {
		e.Price = &p
	}
	if t := o.TriggerPrice.D(); t.IsPositive() {
		e.TriggerPrice = &t
	}
	if ap := o.AvgPrice.D(); e.FilledSize.IsPositive() && ap.IsPositive() {
		e.AvgPrice = &ap
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
		return contract.FundingEvent{Market: r.Symbol, Amount: r.ExecFee.D().Neg(), Rate: given(r.FeeRate), PositionSize: given(r.ExecQty)}
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
	e.UnrealizedPnl, e.Leverage = given(p.UnrealisedPnl), given(p.Leverage)
	if p.LiqPrice.D().IsPositive() { // "" when there is none
		e.LiquidationPrice = given(p.LiqPrice)
	}
	return e
}

// balanceEvent: the unified account's totals, USD-valued, as getBalance
// reads them.
func balanceEvent(w walletPush) contract.BalanceEvent {
	e := contract.BalanceEvent{Asset: "USD"}
	e.Equity, e.FreeCollateral, e.WalletBalance = given(w.TotalEquity), given(w.TotalAvailableBalance), given(w.TotalWalletBalance)
	return e
}

// given is d, or nil when the venue sent no value.
func given(d dec) *decimal.Decimal {
	if !d.Given {
		return nil
	}
	v := d.D()
	return &v
}
