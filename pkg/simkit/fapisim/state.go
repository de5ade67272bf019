package fapisim

import (
	"strconv"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
)

// Margins keeps each account's margin type per symbol (CROSSED unless
// changed).
type Margins struct {
	mu sync.Mutex
	m  map[string]string // account + " " + symbol → CROSSED / ISOLATED
}

// Of is the account's margin type on sym.
func (g *Margins) Of(key, sym string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.m[key+" "+sym]; ok {
		return t
	}
	return "CROSSED"
}

// Change is Change Margin Type on market m: -4046 when unchanged, -4047
// with open orders, -4048 with a position.
func (g *Margins) Change(eng *paper.Engine, q *Req, m paper.MarketInfo) (any, *APIErr) {
	t := q.Get("marginType")
	if t != "CROSSED" && t != "ISOLATED" {
		return nil, BadParam("marginType")
	}
	if g.Of(q.Key, m.Symbol) == t {
		return nil, Errf(400, -4046, "No need to change margin type.")
	}
	if open, _ := eng.OpenOrders(q.Key, m.Symbol); len(open) > 0 {
		return nil, Errf(400, -4047, "Margin type cannot be changed if there exists open orders.")
	}
	if ps, _ := eng.Positions(q.Key, m.Symbol); len(ps) > 0 {
		return nil, Errf(400, -4048, "Margin type cannot be changed if there exists position.")
	}
	g.mu.Lock()
	if g.m == nil {
		g.m = map[string]string{}
	}
	g.m[q.Key+" "+m.Symbol] = t
	g.mu.Unlock()
	return map[string]any{"code": 200, "msg": "success"}, nil
}

// Countdowns are the accounts' countdownCancelAll timers per symbol.
type Countdowns struct {
	mu sync.Mutex
	m  map[string]*time.Timer // account + " " + symbol
}

// Set is Auto-Cancel All Open Orders on market m
// (https://developers.binance.com/docs/derivatives/usds-margined-futures/trade/rest-api/Auto-Cancel-All-Open-Orders;
// Aster's fapi/v3 documents the same): when countdownTime milliseconds
// pass without another call, every open order of the symbol, conditional
// ones too, is cancelled; 0 stops the countdown.
func (c *Countdowns) Set(eng *paper.Engine, q *Req, m paper.MarketInfo) (any, *APIErr) {
	ms, err := strconv.ParseInt(q.Get("countdownTime"), 10, 64)
	if err != nil || ms < 0 {
		return nil, BadParam("countdownTime")
	}
	key, sym := q.Key, m.Symbol
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*time.Timer{}
	}
	if t := c.m[key+" "+sym]; t != nil {
		t.Stop()
		delete(c.m, key+" "+sym)
	}
	if ms > 0 {
		c.m[key+" "+sym] = time.AfterFunc(time.Duration(ms)*time.Millisecond, func() { cancelSymbol(eng, key, sym) })
	}
	return map[string]string{"symbol": sym, "countdownTime": strconv.FormatInt(ms, 10)}, nil
}

func cancelSymbol(eng *paper.Engine, key, sym string) {
	open, _ := eng.OpenOrders(key, sym)
	for _, o := range open {
		_, _ = eng.CancelOrder(key, o.ID)
	}
}

// Modify is Modify Order (PUT order): LIMIT orders only, side, quantity
// and price all mandatory; an unchanged order is -5027
// (https://developers.binance.com/docs/derivatives/usds-margined-futures/trade/rest-api/Modify-Order;
// Aster fact sheet §5). lookup finds the order, answer writes it.
func Modify(eng *paper.Engine, q *Req, lookup func(*Req) (paper.Order, bool, *APIErr), answer func(paper.Order) any) (any, *APIErr) {
	for _, p := range []string{"side", "quantity", "price"} {
		if q.Get(p) == "" {
			return nil, BadParam(p)
		}
	}
	o, ok, e := lookup(q)
	if e != nil {
		return nil, e
	}
	if !ok || o.Status != paper.Open {
		return nil, Errf(400, -2013, "Order does not exist.")
	}
	if o.Type != paper.Limit {
		return nil, Errf(400, -4028, "Order type not supported for modification.")
	}
	if q.Get("side") != string(o.Side) {
		return nil, Errf(400, -4081, "Side does not match the order.")
	}
	m, _ := eng.Market(o.Market)
	qty, e := ParseQty(q.Get, m.LotSize)
	if e != nil {
		return nil, e
	}
	price, e := ParsePrice(q.Get, "price", m.TickSize)
	if e != nil {
		return nil, e
	}
	if qty.Equal(o.Size) && price.Equal(o.Price) {
		return nil, Errf(400, -5027, "No need to modify the order.")
	}
	got, err := eng.AmendOrder(q.Key, o.ID, paper.Amend{Size: qty, Price: price})
	if err != nil {
		return nil, Errf(400, -2010, "%v", err)
	}
	return answer(got), nil
}
