package binance

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

var _ connector.AccountFeeder = (*Adapter)(nil)

// The user data stream
// (https://developers.binance.com/docs/derivatives/usds-margined-futures/user-data-streams/Connect):
// a listen key from POST /fapi/v1/listenKey, valid 60 minutes and extended
// by PUT; the socket is <private base>/ws/<listenKey>. Binance recommends
// the keepalive well inside the hour; the connector sends it every
// ListenKeyKeepAlive (30 min). A key that expired anyway (PUT answers
// -1125, or the socket gets listenKeyExpired) ends the feed, and the
// runtime's reconnect creates a new one.

// FollowAccount implements connector.AccountFeeder. The listen key call
// checks only the API key (fact sheet §4 testCredentials), so a signed
// read checks the secret first: a wrong secret is refused here, with
// Binance's code and message, not later by every REST call.
func (a *Adapter) FollowAccount(ctx context.Context, c connector.Credential, ready func(), emit func(connector.AccountEvent)) error {
	k, err := credKeys(c)
	if err != nil {
		return err
	}
	if _, err := a.accountConfig(ctx, c, k); err != nil {
		return err
	}
	return fapi.UserStream{Venue: "Binance", URL: func(key string) string { return a.cfg.privateURL(c.Environment) + "/" + key },
		Listen: func(ctx context.Context, method string) (string, error) { return a.listenKey(ctx, c, k, method) },
		Every:  a.cfg.listenKeyKeepAlive(), Ping: userPingEvery,
		Frame: func(data []byte) error { return userEvents(data, emit) }}.Follow(ctx, ready)
}

// userPingEvery: the user data socket may be silent for hours, so a
// websocket ping (Binance answers pongs; it pings us every 3 minutes)
// finds a connection that died without closing.
const userPingEvery = time.Minute

// listenKey creates (POST) or extends (PUT) the listen key: USER_STREAM,
// the API key header and no signature.
func (a *Adapter) listenKey(ctx context.Context, c connector.Credential, k *keys, method string) (string, error) {
	var out struct {
		ListenKey string `json:"listenKey"`
	}
	if err := a.c.do(ctx, a.base(c), k, request{method: method, path: "/fapi/v1/listenKey", weight: 1}, &out); err != nil {
		return "", err
	}
	if method == http.MethodPost && out.ListenKey == "" {
		return "", contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "Binance answered POST /fapi/v1/listenKey without a listenKey")
	}
	return out.ListenKey, nil
}

// userFrame is one user data event. Keys differing only in case are all
// declared, as encoding/json matches names case-insensitively.
type userFrame struct {
	Event     string          `json:"e"`
	EventTime connector.Int   `json:"E"` // a number; a string in some of Binance's samples
	TxTime    connector.Int   `json:"T"`
	Order     json.RawMessage `json:"o"`
	Account   json.RawMessage `json:"a"`
}

// tradeUpdate is ORDER_TRADE_UPDATE's "o"
// (…/user-data-streams/Event-Order-Update).
type tradeUpdate struct {
	Symbol      string              `json:"s"`
	Side        string              `json:"S"`
	ClientID    string              `json:"c"`
	Type        string              `json:"o"`
	TimeInForce string              `json:"f"`
	Qty         decimal.Decimal     `json:"q"`
	Price       decimal.Decimal     `json:"p"`
	AvgPrice    decimal.Decimal     `json:"ap"`
	ExecType    string              `json:"x"`
	Status      string              `json:"X"`
	OrderID     int64               `json:"i"`
	LastQty     decimal.Decimal     `json:"l"`
	LastPrice   decimal.Decimal     `json:"L"`
	CumQty      decimal.Decimal     `json:"z"`
	FeeAsset    string              `json:"N"`
	Fee         decimal.Decimal     `json:"n"`
	TradeTime   int64               `json:"T"`
	TradeID     int64               `json:"t"`
	Maker       bool                `json:"m"`
	ReduceOnly  bool                `json:"R"`
	Realized    decimal.NullDecimal `json:"rp"`
}

// algoUpdate is ALGO_UPDATE's "o" (…/user-data-streams/Event-Algo-Order-Update).
type algoUpdate struct {
	ClientID   string              `json:"caid"`
	AlgoID     int64               `json:"aid"`
	Type       string              `json:"o"`
	Symbol     string              `json:"s"`
	Side       string              `json:"S"`
	Qty        decimal.Decimal     `json:"q"`
	Status     string              `json:"X"`
	AvgPrice   decimal.NullDecimal `json:"ap"`
	FilledQty  decimal.NullDecimal `json:"aq"`
	Trigger    decimal.Decimal     `json:"tp"`
	Price      decimal.Decimal     `json:"p"`
	ReduceOnly bool                `json:"R"`
	Reason     string              `json:"rm"`
}

// accountUpdate is ACCOUNT_UPDATE's "a"
// (…/user-data-streams/Event-Balance-and-Position-Update).
type accountUpdate struct {
	Reason   string `json:"m"`
	Balances []struct {
		Asset  string          `json:"a"`
		Wallet decimal.Decimal `json:"wb"`
		Change decimal.Decimal `json:"bc"`
	} `json:"B"`
	Positions []struct {
		Symbol       string              `json:"s"`
		Amount       decimal.Decimal     `json:"pa"`
		Entry        decimal.Decimal     `json:"ep"`
		Unrealized   decimal.NullDecimal `json:"up"`
		PositionSide string              `json:"ps"`
	} `json:"P"`
}

// userEvents emits what one frame says; listenKeyExpired ends the feed.
func userEvents(data []byte, emit func(connector.AccountEvent)) error {
	var f userFrame
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("binance user data stream: unreadable frame: %w", err)
	}
	at := time.UnixMilli(int64(f.EventTime))
	switch f.Event {
	case "ORDER_TRADE_UPDATE":
		var u tradeUpdate
		if err := json.Unmarshal(f.Order, &u); err != nil {
			return fmt.Errorf("binance ORDER_TRADE_UPDATE: %w", err)
		}
		emit(connector.AccountEvent{Time: at, Data: u.order()})
		if u.ExecType == "TRADE" {
			emit(connector.AccountEvent{Time: at, Data: u.fill()})
		}
	case "ALGO_UPDATE":
		var u algoUpdate
		if err := json.Unmarshal(f.Order, &u); err != nil {
			return fmt.Errorf("binance ALGO_UPDATE: %w", err)
		}
		emit(connector.AccountEvent{Time: at, Data: u.order()})
	case "ACCOUNT_UPDATE":
		var u accountUpdate
		if err := json.Unmarshal(f.Account, &u); err != nil {
			return fmt.Errorf("binance ACCOUNT_UPDATE: %w", err)
		}
		for _, e := range u.events() {
			emit(connector.AccountEvent{Time: at, Data: e})
		}
	case "listenKeyExpired":
		return errors.New("binance listen key expired; a new one is needed")
	}
	return nil
}

func (u tradeUpdate) order() contract.OrderEvent {
	o := contract.OrderEvent{OrderID: strconv.FormatInt(u.OrderID, 10), ClientOrderID: u.ClientID, Market: u.Symbol,
		Side: contract.Side(u.Side), Type: u.Type, Size: u.Qty, FilledSize: u.CumQty,
		Status: statusFromWire(u.Status, u.CumQty.IsPositive()), ReduceOnly: u.ReduceOnly}
	if u.Price.IsPositive() {
		p := u.Price
		o.Price = &p
	}
	if u.CumQty.IsPositive() && u.AvgPrice.IsPositive() {
		ap := u.AvgPrice
		o.AvgPrice = &ap
	}
	if u.Status == "EXPIRED" || u.Status == "EXPIRED_IN_MATCH" {
		o.Reason = "expired"
		if u.TimeInForce == "GTX" && !u.CumQty.IsPositive() {
			o.Reason = "post_only_would_take"
		}
	}
	return o
}

func (u tradeUpdate) fill() contract.FillEvent {
	liq := "TAKER"
	if u.Maker {
		liq = "MAKER"
	}
	f := contract.FillEvent{FillID: strconv.FormatInt(u.TradeID, 10), OrderID: strconv.FormatInt(u.OrderID, 10),
		ClientOrderID: u.ClientID, Market: u.Symbol, Side: contract.Side(u.Side), Size: u.LastQty, Price: u.LastPrice,
		Fee: u.Fee, FeeAsset: u.FeeAsset, Liquidity: liq, Timestamp: u.TradeTime / 1000}
	if u.Realized.Valid {
		pnl := u.Realized.Decimal
		f.RealizedPnl = &pnl
	}
	return f
}

func (u algoUpdate) order() contract.OrderEvent {
	trigger := u.Trigger
	o := contract.OrderEvent{OrderID: algoOrderID(u.AlgoID), ClientOrderID: u.ClientID, Market: u.Symbol,
		Side: contract.Side(u.Side), Type: u.Type, Size: u.Qty, TriggerPrice: &trigger,
		Status: algoStatusFromWire(u.Status), ReduceOnly: u.ReduceOnly, Reason: u.Reason}
	if u.Price.IsPositive() {
		p := u.Price
		o.Price = &p
	}
	if u.FilledQty.Valid {
		o.FilledSize = u.FilledQty.Decimal
	}
	if o.FilledSize.IsPositive() && u.AvgPrice.Valid && u.AvgPrice.Decimal.IsPositive() {
		ap := u.AvgPrice.Decimal
		o.AvgPrice = &ap
	}
	return o
}

// events are the balance and position events of an ACCOUNT_UPDATE. A
// FUNDING_FEE update names the market only for an isolated position (the
// one position it carries); a cross position's funding shows in the
// balance alone, and getFundingPayments has the rest.
func (u accountUpdate) events() []any {
	var out []any
	for _, p := range u.Positions {
		out = append(out, positionEvent(p.Symbol, p.Amount, p.Entry, p.Unrealized, p.PositionSide))
	}
	for _, b := range u.Balances {
		wb := b.Wallet
		out = append(out, contract.BalanceEvent{Asset: b.Asset, WalletBalance: &wb})
		if u.Reason == "FUNDING_FEE" && len(u.Positions) == 1 && !b.Change.IsZero() {
			out = append(out, contract.FundingEvent{Market: u.Positions[0].Symbol, Amount: b.Change})
		}
	}
	return out
}

func positionEvent(symbol string, amount, entry decimal.Decimal, unrealized decimal.NullDecimal, positionSide string) contract.PositionEvent {
	e := contract.PositionEvent{Market: symbol, Size: amount.Abs(), EntryPrice: entry}
	switch {
	case amount.IsZero():
		e.Side = contract.PositionFlat
	case positionSide == "SHORT" || (positionSide != "LONG" && amount.IsNegative()):
		e.Side = contract.Short
	default:
		e.Side = contract.Long
	}
	if unrealized.Valid {
		up := unrealized.Decimal
		e.UnrealizedPnl = &up
	}
	return e
}
