package okx

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// privateArgs are the channels followed: orders
// (https://www.okx.com/docs-v5/en/#order-book-trading-trade-ws-order-channel;
// its fills carry tradeId and fillSz, so the restricted fills channel is
// not needed), positions
// (#trading-account-websocket-positions-channel) and balance_and_position
// (#trading-account-websocket-balance-and-position-channel).
var privateArgs = []map[string]string{
	{"channel": "orders", "instType": "SWAP"},
	{"channel": "positions", "instType": "SWAP"},
	{"channel": "balance_and_position"},
}

// FollowAccount implements connector.AccountFeeder: login (wsLogin;
// https://www.okx.com/docs-v5/en/#overview-websocket-login), subscribe the
// three channels, then read; "ping" every 20 s inside OKX's 30 s idle
// limit. Sizes come in contracts and leave in base units, as in REST.
func (a *Adapter) FollowAccount(ctx context.Context, c connector.Credential, ready func(), emit func(connector.AccountEvent)) error {
	k, err := credKeys(c)
	if err != nil {
		return err
	}
	f := &privateFeed{a: a, c: c, ready: ready, emit: emit, trades: map[string]bool{}}
	return venuekit.PrivateStream{Venue: "OKX private", Name: "okx private stream", URL: a.cfg.privateURL(c.Environment),
		Open: []any{wsLogin(k, a.c.Host(a.base(c)).clock.Now())}, Ping: []byte("ping"), Every: venuekit.PingEvery, Frame: f.frame}.Run(ctx)
}

// privateFeed is one socket's state.
type privateFeed struct {
	a          *Adapter
	c          connector.Credential
	ready      func()
	emit       func(connector.AccountEvent)
	subscribed int
	trades     map[string]bool // tradeIds told on this socket
}

// privateMsg is an event answer or a push.
type privateMsg struct {
	Event string            `json:"event"`
	Code  string            `json:"code"`
	Msg   string            `json:"msg"`
	Arg   map[string]string `json:"arg"`
	Data  json.RawMessage   `json:"data"`
}

func (f *privateFeed) frame(ctx context.Context, ws *venuekit.Socket, data []byte) error {
	if string(data) == "pong" {
		return nil
	}
	var m privateMsg
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("okx private stream: unreadable frame: %w", err)
	}
	switch m.Event {
	case "login":
		if err := ws.WriteJSON(ctx, map[string]any{"op": "subscribe", "args": privateArgs}); err != nil {
			return fmt.Errorf("okx private stream: %w", err)
		}
		return nil
	case "error":
		if f.subscribed == 0 && loginCode(m.Code) {
			return contract.Upstream(contract.ReasonAuthenticationFailed, m.Code, m.Msg,
				"OKX refused the private stream's login: %s (code %s); check the credential's apiKey, apiSecret and passphrase, and that a demo-trading key is stored as testnet", m.Msg, m.Code)
		}
		return fmt.Errorf("okx private stream: error %s: %s", m.Code, m.Msg)
	case "subscribe":
		if f.subscribed++; f.subscribed == len(privateArgs) {
			f.ready()
		}
		return nil
	case "":
	default:
		return nil // channel-conn-count, notice: informational
	}
	return f.events(ctx, m.Arg["channel"], m.Data)
}

// loginCode reports the login refusals of OKX's websocket error codes
// (#error-code-websocket-public): 60004-60007 timestamp, key and sign,
// 60009 login failed, 60024 wrong passphrase, 60032 key in use elsewhere.
func loginCode(code string) bool {
	switch code {
	case "60004", "60005", "60006", "60007", "60009", "60024", "60032":
		return true
	}
	return false
}

// orderPush is an orders channel row.
type orderPush struct {
	order
	TradeID    string `json:"tradeId"`
	FillSz     dec    `json:"fillSz"`
	FillPx     dec    `json:"fillPx"`
	FillFee    dec    `json:"fillFee"`
	FillFeeCcy string `json:"fillFeeCcy"`
	FillPnl    dec    `json:"fillPnl"`
	FillTime   ms     `json:"fillTime"`
	ExecType   string `json:"execType"`
	UTime      ms     `json:"uTime"`
}

// positionPush is a positions channel row.
type positionPush struct {
	position
	LiqPx dec `json:"liqPx"`
	UTime ms  `json:"uTime"`
}

// balancePush is a balance_and_position row; its posData repeats what the
// positions channel says with more fields, so only balData is read.
type balancePush struct {
	PTime   ms `json:"pTime"`
	BalData []struct {
		Ccy     string `json:"ccy"`
		CashBal dec    `json:"cashBal"`
	} `json:"balData"`
}

// events emits a push's rows; an unreadable push emits none.
func (f *privateFeed) events(ctx context.Context, channel string, data json.RawMessage) (err error) {
	add := func(t ms, e any) { f.emit(connector.AccountEvent{Time: time.UnixMilli(int64(t)), Data: e}) }
	switch channel {
	case "orders":
		err = venuekit.EachRow(data, func(r orderPush) {
			im, err := f.a.inst(ctx, f.c, r.InstID)
			if err != nil {
				return // not a USDT swap of ours
			}
			add(r.UTime, orderEvent(r, im))
			if r.TradeID != "" && r.FillSz.IsPositive() && !f.trades[r.TradeID] {
				f.trades[r.TradeID] = true
				add(r.UTime, fillEvent(r, im))
			}
		})
	case "positions":
		err = venuekit.EachRow(data, func(r positionPush) {
			if im, err := f.a.inst(ctx, f.c, r.InstID); err == nil {
				add(r.UTime, positionEvent(r, im))
			}
		})
	case "balance_and_position":
		err = venuekit.EachRow(data, func(r balancePush) {
			for _, b := range r.BalData {
				add(r.PTime, contract.BalanceEvent{Asset: b.Ccy, WalletBalance: new(b.CashBal.D())})
			}
		})
	}
	if err != nil {
		return fmt.Errorf("okx %s push: %w", channel, err)
	}
	return nil
}

// orderEvent: sizes from contracts to base units, as getOrders.
func orderEvent(r orderPush, im instMeta) contract.OrderEvent {
	o := orderFromWire(r.order, im)
	e := contract.OrderEvent{OrderID: o.ID, ClientOrderID: o.ClientOrderID, Market: o.Market, Side: o.Side, Type: o.Type,
		Size: o.Size, FilledSize: o.FilledSize, Status: o.Status, ReduceOnly: o.ReduceOnly}
	e.Price = venuekit.IfPositive(o.Price)
	if o.FilledSize.IsPositive() {
		e.AvgPrice = venuekit.IfPositive(r.AvgPx.D())
	}
	if e.Status == contract.StatusRejected {
		e.Reason = "cancel_source_" + r.CancelSource
		if r.CancelSource == cancelPostOnly {
			e.Reason = "post_only_would_take"
		}
	}
	return e
}

// fillEvent: a fill derived from the order push's last fill; OKX's fee is
// negative when charged, the contract's is the cost.
func fillEvent(r orderPush, im instMeta) contract.FillEvent {
	liq := "TAKER"
	if r.ExecType == "M" {
		liq = "MAKER"
	}
	f := contract.FillEvent{FillID: r.TradeID, OrderID: r.OrdID, ClientOrderID: r.ClOrdID, Market: r.InstID,
		Side: sideFromWire(r.Side), Size: im.base(r.FillSz.D()), Price: r.FillPx.D(), Fee: r.FillFee.D().Neg(),
		FeeAsset: r.FillFeeCcy, Liquidity: liq, Timestamp: int64(r.FillTime) / 1000}
	f.RealizedPnl = venuekit.Given(r.FillPnl)
	return f
}

func positionEvent(r positionPush, im instMeta) contract.PositionEvent {
	p := positionFromWire(r.position, im)
	e := contract.PositionEvent{Market: p.Market, Side: p.Side, Size: p.Size, EntryPrice: p.EntryPrice}
	if p.Size.IsZero() {
		e.Side = contract.PositionFlat
	}
	e.UnrealizedPnl, e.Leverage = venuekit.Given(r.Upl), venuekit.Given(r.Lever)
	e.LiquidationPrice = venuekit.IfPositive(r.LiqPx.D()) // "" when there is none
	return e
}
