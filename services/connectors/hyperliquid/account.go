package hyperliquid

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

var _ connector.AccountFeeder = (*Adapter)(nil)

// accountSubscriptions are what FollowAccount subscribes to for the
// account address (https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/websocket/subscriptions):
// orderUpdates (WsOrder[]), userFills (WsUserFills), userFundings
// (WsUserFundings) and clearinghouseState (positions and margin; the
// nktkas SDK's src/api/subscription/_methods/clearinghouseState.ts, not on
// the docs page we could read). userEvents is left out: its fills and
// funding repeat userFills and userFundings without their snapshot flag.
var accountSubscriptions = []string{"orderUpdates", "userFills", "userFundings", "clearinghouseState"}

// FollowAccount implements connector.AccountFeeder. Hyperliquid's account
// subscriptions need no login (they name an address), so the credential is
// checked first as testCredentials does (userRole of the agent, weight
// 60): a key that is not the account's or its approved agent is refused
// with AUTHENTICATION_FAILED naming why. ready is called once every
// subscription is acknowledged; snapshots (isSnapshot) are skipped, as the
// runtime reconciles from REST.
func (a *Adapter) FollowAccount(ctx context.Context, c connector.Credential, ready func(), emit func(connector.AccountEvent)) error {
	acct, err := a.account(c)
	if err != nil {
		return err
	}
	if _, err := a.TestCredentials(ctx, c); err != nil {
		return venuekit.FeedRefused("hyperliquid", c.ID, err)
	}
	s, err := venuekit.DialAccount(ctx, "Hyperliquid", a.streamURL(c.Environment))
	if err != nil {
		return err
	}
	defer s.Close()
	// Pings as the SDK does: the venue drops a socket that sent nothing for
	// about a minute.
	s.Keepalive(pingEvery, func(ctx context.Context) error { return s.WriteText(ctx, []byte(`{"method":"ping"}`)) })
	subs := make([]any, len(accountSubscriptions))
	for i, typ := range accountSubscriptions {
		subs[i] = map[string]any{"method": "subscribe", "subscription": map[string]string{"type": typ, "user": acct.user}}
	}
	f := &follower{a: a, c: c, emit: emit, orders: map[uint64]orderInfo{}, positions: map[string]string{}}
	return s.Follow(ctx, subs, ready, func(data []byte) (bool, error) { return f.frame(ctx, data) })
}

// follower turns one socket's messages into account events.
type follower struct {
	a    *Adapter
	c    connector.Credential
	emit func(connector.AccountEvent)
	// orders: what orderUpdates does not say (type, trigger, tif), read
	// once per order with orderStatus.
	orders map[uint64]orderInfo
	// positions: the last position sent per coin (size and entry), so
	// clearinghouseState pushes that only move the mark send nothing.
	positions map[string]string
	moved     bool // a fill or funding since the last balance sent
}

type orderInfo struct {
	typ     string
	trigger *decimal.Decimal
}

// frame reads one message; it is an acknowledgement, a refusal or data.
func (f *follower) frame(ctx context.Context, data []byte) (bool, error) {
	var m wsMessage
	if json.Unmarshal(data, &m) != nil {
		return false, nil // "Websocket connection established." and the like
	}
	switch m.Channel {
	case "subscriptionResponse":
		return true, nil
	case "error":
		var msg string
		_ = json.Unmarshal(m.Data, &msg)
		return false, contract.Upstream(contract.ReasonUpstreamUnavailable, "", msg, "Hyperliquid refused the account subscription: %s", msg)
	}
	return false, f.handle(ctx, m)
}

func (f *follower) handle(ctx context.Context, m wsMessage) error {
	switch m.Channel {
	case "orderUpdates":
		var os []wsOrder
		if err := json.Unmarshal(m.Data, &os); err != nil {
			return err
		}
		for _, o := range os {
			if err := f.order(ctx, o); err != nil {
				return err
			}
		}
	case "userFills":
		var x struct {
			IsSnapshot bool       `json:"isSnapshot"`
			Fills      []UserFill `json:"fills"`
		}
		if err := json.Unmarshal(m.Data, &x); err != nil || x.IsSnapshot {
			return err
		}
		for _, u := range x.Fills {
			f.moved = true
			f.emit(connector.AccountEvent{Time: time.UnixMilli(int64(u.Time)), Data: fillEvent(u)})
		}
	case "userFundings":
		var x struct {
			IsSnapshot bool `json:"isSnapshot"`
			Fundings   []struct {
				Time connector.Int `json:"time"`
				fundingDelta
			} `json:"fundings"`
		}
		if err := json.Unmarshal(m.Data, &x); err != nil || x.IsSnapshot {
			return err
		}
		for _, p := range x.Fundings {
			f.moved = true
			ev := contract.FundingEvent{Market: p.Coin, Amount: dec(p.USDC), Rate: venuekit.OptDecimal(p.FundingRate), PositionSize: venuekit.OptDecimal(p.Szi)}
			f.emit(connector.AccountEvent{Time: time.UnixMilli(int64(p.Time)), Data: ev})
		}
	case "clearinghouseState":
		var x struct {
			ClearinghouseState ClearinghouseState `json:"clearinghouseState"`
		}
		if err := json.Unmarshal(m.Data, &x); err != nil {
			return err
		}
		f.state(x.ClearinghouseState)
	}
	return nil
}

// wsOrder is one orderUpdates entry: WsBasicOrder (the fields of an open
// order it has) and its status.
type wsOrder struct {
	Order           FrontendOrder `json:"order"`
	Status          string        `json:"status"`
	StatusTimestamp connector.Int `json:"statusTimestamp"`
}

// order emits one order change. Its type and trigger come from orderStatus
// the first time the order is seen; the client order id is the gateway's
// (Cloid is a hash), so the runtime matches it by order id.
func (f *follower) order(ctx context.Context, o wsOrder) error {
	oid := uint64(o.Order.Oid)
	info, ok := f.orders[oid]
	if !ok {
		var st OrderStatusResponse
		if err := f.a.userInfo(ctx, f.c, &st, "orderStatus", "oid", oid); err != nil {
			return err
		}
		info = orderInfo{typ: "LIMIT"}
		if st.Status == "order" && st.Order != nil {
			w := orderFromWire(st.Order.Order)
			info = orderInfo{typ: w.Type, trigger: w.TriggerPrice}
		}
		f.orders[oid] = info
	}
	size, left := dec(o.Order.OrigSz), dec(o.Order.Sz)
	open := contract.StatusOpen
	if info.trigger != nil {
		open = contract.StatusPending
	}
	ev := contract.OrderEvent{
		OrderID: strconv.FormatUint(oid, 10), Market: o.Order.Coin, Side: sideFromWire(o.Order.Side), Type: info.typ,
		Size: size, TriggerPrice: info.trigger, FilledSize: size.Sub(left), ReduceOnly: o.Order.ReduceOnly,
		Status: statusFromOrderStatus(o.Status, open, size.Sub(left).IsPositive()),
	}
	if info.trigger == nil {
		ev.Price = venuekit.OptDecimal(o.Order.LimitPx)
	}
	switch {
	case o.Status == "badAloPxRejected": // the name every venue's post-only refusal has (DESIGN §13)
		ev.Reason = "post_only_would_take"
	case (ev.Status == contract.StatusCancelled || ev.Status == contract.StatusRejected) && o.Status != "canceled":
		ev.Reason = o.Status // the venue's word when not the owner's cancel: marginCanceled, reduceOnlyRejected, …
	}
	if ev.Final() {
		delete(f.orders, oid)
	}
	f.emit(connector.AccountEvent{Time: time.UnixMilli(int64(o.StatusTimestamp)), Data: ev})
	return nil
}

func fillEvent(u UserFill) contract.FillEvent {
	liq := "MAKER"
	if u.Crossed { // crossed: the fill took liquidity
		liq = "TAKER"
	}
	return venuekit.FillEvent(fillFromWire(u), u.FeeToken, liq)
}

// state turns a clearinghouseState push into position events for the
// coins whose size or entry changed (FLAT for those gone) and, when
// positions changed or a fill or funding came since, a balance event.
func (f *follower) state(s ClearinghouseState) {
	t := time.UnixMilli(int64(s.Time))
	if s.Time == 0 {
		t = f.a.now()
	}
	seen := map[string]bool{}
	changed := false
	for _, ap := range s.AssetPositions {
		p := ap.Position
		if dec(p.Szi).IsZero() {
			continue
		}
		seen[p.Coin] = true
		key := p.Szi + " " + p.EntryPx + " " + strconv.Itoa(p.Leverage.Value)
		if f.positions[p.Coin] == key {
			continue
		}
		f.positions[p.Coin], changed = key, true
		f.emit(connector.AccountEvent{Time: t, Data: positionEvent(p)})
	}
	for coin := range f.positions {
		if !seen[coin] {
			delete(f.positions, coin)
			changed = true
			f.emit(connector.AccountEvent{Time: t, Data: venuekit.FlatEvent(coin)})
		}
	}
	if changed || f.moved {
		f.moved = false
		f.emit(connector.AccountEvent{Time: t, Data: contract.BalanceEvent{Asset: "USDC",
			Equity: venuekit.OptDecimal(s.MarginSummary.AccountValue), FreeCollateral: venuekit.OptDecimal(s.Withdrawable)}})
	}
}

func positionEvent(p PositionWire) contract.PositionEvent {
	var liq *decimal.Decimal
	if p.LiquidationPx != nil {
		liq = venuekit.OptDecimal(*p.LiquidationPx)
	}
	return venuekit.PositionEvent(positionFromWire(p), venuekit.OptDecimal(p.UnrealizedPnl), liq)
}
