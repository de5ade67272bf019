package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// fields reads one field of a JSON body object as text ("" when absent).
type fields func(name string) string

func getter(obj map[string]any) fields {
	return func(name string) string {
		v, ok := obj[name]
		if !ok || v == nil {
			return ""
		}
		switch x := v.(type) {
		case string:
			return x
		case bool:
			return strconv.FormatBool(x)
		case json.Number:
			return x.String()
		}
		return fmt.Sprint(v)
	}
}

func decodeObject(b []byte) (fields, *apiErr) {
	var obj map[string]any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&obj); err != nil {
		return nil, errf("50002", "JSON syntax error")
	}
	return getter(obj), nil
}

func decodeArray(b []byte, most int) ([]fields, *apiErr) {
	var arr []map[string]any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&arr); err != nil {
		return nil, errf("50002", "JSON syntax error")
	}
	if len(arr) == 0 || len(arr) > most {
		return nil, errf("51000", "Parameter count error: at most %d items", most)
	}
	out := make([]fields, len(arr))
	for i, o := range arr {
		out[i] = getter(o)
	}
	return out, nil
}

// deadOrder is a post-only order OKX accepted and then cancelled because
// it would have taken liquidity (cancelSource 31); the paper engine
// refuses it outright, so the simulator keeps it.
type deadOrder struct {
	key   string
	wire  map[string]string
	clOrd string
}

// wireOrder renders a paper order as order details
// (https://www.okx.com/docs-v5/en/#order-book-trading-trade-get-order-details).
func wireOrder(o paper.Order, in Instrument, ordType string) map[string]string {
	state := map[paper.OrderStatus]string{paper.Open: "live", paper.Filled: "filled", paper.Cancelled: "canceled", paper.Rejected: "canceled"}[o.Status]
	if o.Status == paper.Open && o.FilledSize.IsPositive() {
		state = "partially_filled"
	}
	px := ""
	if o.Type == paper.Limit {
		px = o.Price.String()
	}
	avg := ""
	if o.FilledSize.IsPositive() {
		avg = o.AvgFillPrice.String()
	}
	if ordType == "" {
		ordType = map[paper.OrderType]string{paper.Limit: "limit", paper.Market: "market"}[o.Type]
		if o.PostOnly {
			ordType = "post_only"
		}
	}
	// cancelSource: 1 the owner's cancel, 0 one by the system
	// (https://www.okx.com/docs-v5/en/#order-book-trading-trade-get-order-details).
	source := ""
	if state == "canceled" {
		source = "1"
		if o.Reason != "" {
			source = "0"
		}
	}
	return map[string]string{"instType": "SWAP", "instId": o.Market, "ordId": okxID(o.ID, ordOffset), "clOrdId": o.ClientOrderID,
		"tag": "", "px": px, "sz": contracts(o.Size, in).String(), "ordType": ordType, "side": strings.ToLower(string(o.Side)),
		"posSide": "net", "tdMode": "cross", "accFillSz": contracts(o.FilledSize, in).String(), "fillPx": avg, "avgPx": avg,
		"state": state, "lever": "20", "fee": o.Fee.Neg().String(), "feeCcy": "USDT", "reduceOnly": strconv.FormatBool(o.ReduceOnly),
		"cancelSource": source, "cTime": ms(o.CreatedAt), "uTime": ms(o.UpdatedAt)}
}

// lookupOrder finds an order by ordId or clOrdId, the paper engine's or a
// dead post-only one.
func (s *Server) lookupOrder(key string, get fields) (map[string]string, paper.Order, bool, *apiErr) {
	in, e := s.inst(get("instId"))
	if e != nil {
		return nil, paper.Order{}, false, e
	}
	ordID, cl := get("ordId"), get("clOrdId")
	if ordID == "" && cl == "" {
		return nil, paper.Order{}, false, errf("51000", "Parameter ordId or clOrdId error")
	}
	s.mu.Lock()
	for id, d := range s.dead {
		if d.key == key && d.wire["instId"] == in.InstID && ((ordID != "" && id == ordID) || (ordID == "" && d.clOrd == cl)) {
			s.mu.Unlock()
			return d.wire, paper.Order{}, false, nil
		}
	}
	s.mu.Unlock()
	var o paper.Order
	var err error
	if ordID != "" {
		pid, ok := paperID(ordID, ordOffset)
		if !ok {
			return nil, o, false, errf("51603", "Order does not exist")
		}
		o, err = s.eng.Order(key, pid)
	} else {
		o, err = s.eng.OrderByClientID(key, cl)
	}
	if err != nil || o.Market != in.InstID || (o.Type != paper.Limit && o.Type != paper.Market) {
		return nil, o, false, errf("51603", "Order does not exist")
	}
	return wireOrder(o, in, ""), o, true, nil
}

// https://www.okx.com/docs-v5/en/#order-book-trading-trade-get-order-details
func (s *Server) orderDetails(q *req) (any, *apiErr) {
	w, _, _, e := s.lookupOrder(q.key, q.get)
	if e != nil {
		return nil, e
	}
	return []map[string]string{w}, nil
}

// https://www.okx.com/docs-v5/en/#order-book-trading-trade-get-order-list
// Oldest last: newest first, after = ordId: older orders than that one.
func (s *Server) ordersPending(q *req) (any, *apiErr) {
	want := q.get("instId")
	if want != "" {
		if _, e := s.inst(want); e != nil {
			return nil, e
		}
	}
	limit := 100
	if v := q.get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return nil, badParam("limit")
		}
		limit = n
	}
	var after int64
	if v := q.get("after"); v != "" {
		after, _ = strconv.ParseInt(v, 10, 64)
	}
	open, err := s.eng.OpenOrders(q.key, want)
	if err != nil {
		return nil, errf("50026", "%v", err)
	}
	out := []map[string]string{}
	for i := len(open) - 1; i >= 0 && len(out) < limit; i-- {
		o := open[i]
		id, _ := strconv.ParseInt(okxID(o.ID, ordOffset), 10, 64)
		if o.Type != paper.Limit || (after > 0 && id >= after) {
			continue
		}
		out = append(out, wireOrder(o, s.insts[o.Market], ""))
	}
	return out, nil
}

// clOrdPattern is OKX's rule for clOrdId and algoClOrdId.
var clOrdPattern = regexp.MustCompile(`^[A-Za-z0-9]{1,32}$`)

// placeOne runs Place Order's checks and places the order; the answer is
// the data item, sCode "0" or an error.
func (s *Server) placeOne(q *req, get fields) (map[string]string, *apiErr) {
	cl := get("clOrdId")
	item := func(code, msg string) *apiErr {
		return &apiErr{status: 200, code: code, msg: msg}
	}
	if cl != "" && !clOrdPattern.MatchString(cl) {
		return nil, item("51000", "Parameter clOrdId error")
	}
	in, e := s.inst(get("instId"))
	if e != nil {
		return nil, e
	}
	mode := s.mode(q.key)
	if mode.acctLv == "1" {
		return nil, item("51010", "You can't complete this request under your current account mode.")
	}
	if mode.posMode == "long_short_mode" && get("posSide") == "" {
		return nil, item("51000", "Parameter posSide error")
	}
	if td := get("tdMode"); td != "cross" && td != "isolated" {
		return nil, badParam("tdMode")
	}
	side := get("side")
	if side != "buy" && side != "sell" {
		return nil, badParam("side")
	}
	sz, err := decimal.NewFromString(get("sz"))
	if err != nil || !sz.IsPositive() {
		return nil, badParam("sz")
	}
	if !sz.Mod(in.LotSz).IsZero() {
		return nil, item("51121", fmt.Sprintf("Order quantity must be a multiple of the lot size %s", in.LotSz))
	}
	if sz.LessThan(in.MinSz) {
		return nil, item("51020", "Your order should meet or exceed the minimum order amount.")
	}
	req := paper.OrderRequest{Market: in.InstID, Side: paper.Side(strings.ToUpper(side)), Size: sz.Mul(in.CtVal),
		ReduceOnly: get("reduceOnly") == "true", ClientOrderID: cl}
	typ := get("ordType")
	switch typ {
	case "market":
		req.Type = paper.Market
		if in.MaxMktSz.IsPositive() && sz.GreaterThan(in.MaxMktSz) {
			return nil, item("51005", "Order quantity exceeds the maximum market order size")
		}
	case "limit", "post_only":
		req.Type, req.PostOnly = paper.Limit, typ == "post_only"
		if req.Price, err = decimal.NewFromString(get("px")); err != nil || !req.Price.IsPositive() {
			return nil, badParam("px")
		}
		if !req.Price.Mod(in.TickSz).IsZero() {
			return nil, item("51150", "The precision of the number of trades or the price exceeds the limit")
		}
	default:
		return nil, badParam("ordType")
	}
	if cl != "" {
		if o, err := s.eng.OrderByClientID(q.key, cl); err == nil && (o.Status == paper.Open || o.Status == paper.Pending) {
			return nil, item("51016", "Duplicated clOrdId")
		}
	}
	o, err := s.eng.PlaceOrder(q.key, req)
	switch {
	case errors.Is(err, paper.ErrPostOnlyWouldCross):
		return s.killPostOnly(q, in, get), nil
	case errors.Is(err, paper.ErrInsufficientMargin):
		return nil, item("51008", "Order failed. Insufficient USDT margin in account")
	case errors.Is(err, paper.ErrReduceOnly):
		return nil, item("51169", "Order failed because you don't have any positions in this direction for this contract to reduce or close.")
	case err != nil:
		return nil, item("51000", err.Error())
	}
	return map[string]string{"ordId": okxID(o.ID, ordOffset), "clOrdId": cl, "tag": "", "ts": ms(q.now), "sCode": "0", "sMsg": "Order placed"}, nil
}

// killPostOnly does what OKX does with a post-only order that would take
// liquidity: accept it, then cancel it with cancelSource 31.
func (s *Server) killPostOnly(q *req, in Instrument, get fields) map[string]string {
	s.mu.Lock()
	s.deadSeq++
	id := strconv.FormatInt(deadOffset+s.deadSeq, 10)
	s.dead[id] = deadOrder{key: q.key, clOrd: get("clOrdId"), wire: map[string]string{"instType": "SWAP", "instId": in.InstID,
		"ordId": id, "clOrdId": get("clOrdId"), "tag": "", "px": get("px"), "sz": get("sz"), "ordType": "post_only",
		"side": get("side"), "posSide": "net", "tdMode": "cross", "accFillSz": "0", "fillPx": "", "avgPx": "",
		"state": "canceled", "lever": "20", "fee": "0", "feeCcy": "USDT", "reduceOnly": strconv.FormatBool(get("reduceOnly") == "true"),
		"cancelSource": "31", "cancelSourceReason": "Post only order would take liquidity", "cTime": ms(q.now), "uTime": ms(q.now)}}
	wire := s.dead[id].wire
	s.mu.Unlock()
	s.pushDead(q.key, wire)
	return map[string]string{"ordId": id, "clOrdId": get("clOrdId"), "tag": "", "ts": ms(q.now), "sCode": "0", "sMsg": "Order placed"}
}

// failedItem is a data item of a refused order.
func failedItem(e *apiErr, get fields) map[string]string {
	return map[string]string{"ordId": "", "clOrdId": get("clOrdId"), "tag": "", "ts": "", "sCode": e.code, "sMsg": e.msg}
}

// https://www.okx.com/docs-v5/en/#order-book-trading-trade-post-place-order
// A refused order answers code 1 with the reason in data[0].sCode.
func (s *Server) placeOrder(q *req) (any, *apiErr) {
	get, e := decodeObject(q.body)
	if e != nil {
		return nil, e
	}
	item, e := s.placeOne(q, get)
	if e != nil {
		return nil, &apiErr{status: 200, code: "1", msg: "All operations failed", data: []any{failedItem(e, get)}}
	}
	return []any{item}, nil
}

// batchEnvelope picks code 0, 1 (all failed) or 2 (some failed).
func batchEnvelope(items []map[string]string) any {
	failed := 0
	for _, it := range items {
		if it["sCode"] != "0" {
			failed++
		}
	}
	switch {
	case failed == 0:
		return items
	case failed == len(items):
		return envelope{code: "1", msg: "All operations failed", data: items}
	}
	return envelope{code: "2", msg: "Bulk operation partially succeeded", data: items}
}

// https://www.okx.com/docs-v5/en/#order-book-trading-trade-post-place-multiple-orders
func (s *Server) batchOrders(q *req) (any, *apiErr) {
	gets, e := decodeArray(q.body, 20)
	if e != nil {
		return nil, e
	}
	items := make([]map[string]string, len(gets))
	for i, get := range gets {
		it, e := s.placeOne(q, get)
		if e != nil {
			it = failedItem(e, get)
		}
		items[i] = it
	}
	return batchEnvelope(items), nil
}

// cancelOne cancels one regular order: 51400 when it is unknown or done.
func (s *Server) cancelOne(key string, get fields) map[string]string {
	w, o, live, e := s.lookupOrder(key, get)
	item := map[string]string{"ordId": get("ordId"), "clOrdId": get("clOrdId"), "ts": "", "sCode": "0", "sMsg": ""}
	if e != nil || !live || o.Status != paper.Open {
		if e != nil && e.code != "51603" {
			item["sCode"], item["sMsg"] = e.code, e.msg
		} else {
			item["sCode"], item["sMsg"] = "51400", "Cancellation failed as the order has been filled, canceled or does not exist."
		}
		return item
	}
	if _, err := s.eng.CancelOrder(key, o.ID); err != nil {
		item["sCode"], item["sMsg"] = "51400", "Cancellation failed as the order has been filled, canceled or does not exist."
		return item
	}
	item["ordId"], item["clOrdId"] = w["ordId"], w["clOrdId"]
	return item
}

// https://www.okx.com/docs-v5/en/#order-book-trading-trade-post-cancel-order
func (s *Server) cancelOrder(q *req) (any, *apiErr) {
	get, e := decodeObject(q.body)
	if e != nil {
		return nil, e
	}
	it := s.cancelOne(q.key, get)
	if it["sCode"] != "0" {
		return nil, &apiErr{status: 200, code: "1", msg: "All operations failed", data: []any{it}}
	}
	return []any{it}, nil
}

// https://www.okx.com/docs-v5/en/#order-book-trading-trade-post-cancel-multiple-orders
func (s *Server) cancelBatch(q *req) (any, *apiErr) {
	gets, e := decodeArray(q.body, 20)
	if e != nil {
		return nil, e
	}
	items := make([]map[string]string, len(gets))
	for i, get := range gets {
		items[i] = s.cancelOne(q.key, get)
	}
	return batchEnvelope(items), nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
