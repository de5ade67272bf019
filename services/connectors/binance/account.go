package binance

import (
	"context"
	"encoding/json"
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
		Listen: func(ctx context.Context, method string) (string, error) {
			// USER_STREAM: the API key header and no signature.
			return fapi.ListenKey("Binance", prefix+"/listenKey", method, func(out any) error {
				return a.c.Do(ctx, a.c.Base(c), k, fapi.Request{Method: method, Path: prefix + "/listenKey", Weight: 1}, out)
			})
		},
		Every: a.cfg.listenKeyKeepAlive(), Ping: userPingEvery, Frame: userEvents.Emit(emit)}.Follow(ctx, ready)
}

// userPingEvery: the user data socket may be silent for hours, so a
// websocket ping (Binance answers pongs; it pings us every 3 minutes)
// finds a connection that died without closing.
const userPingEvery = time.Minute

// userEvents reads Binance's frames; ALGO_UPDATE reports the algo
// service's orders.
var userEvents = fapi.Events{Venue: "Binance", Other: func(event string, o json.RawMessage) (contract.OrderEvent, bool, error) {
	var u algoUpdate
	if event != "ALGO_UPDATE" {
		return contract.OrderEvent{}, false, nil
	}
	err := json.Unmarshal(o, &u)
	return u.order(), err == nil, err
}}

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
