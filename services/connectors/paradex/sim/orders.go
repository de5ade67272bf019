package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/services/connectors/paradex/stark"
	"github.com/shopspring/decimal"
)

// order is what the simulator keeps of a Paradex order beside the paper
// engine's: the request as sent and, until the risk checks ran, nothing
// else (status NEW). frozen marks an order the engine never took.
type order struct {
	ID      string
	Account string
	Req     stark.OrderRequest
	Created time.Time
	PaperID string
	Reason  string // cancel_reason of a frozen order
	frozen  bool
	intake  bool
}

func (s *Server) nextID(now time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	// 28 digits, like Paradex's ids: ms time and a sequence.
	return fmt.Sprintf("%013d%015d", now.UnixMilli(), s.seq)
}

var orderTypes = map[string]paper.OrderType{
	"LIMIT": paper.Limit, "MARKET": paper.Market, "STOP_MARKET": paper.StopMarket,
	"STOP_LOSS_MARKET": paper.StopMarket, "TAKE_PROFIT_MARKET": paper.TakeProfitMarket,
}

// errBelowMin is an order worth less than the market's min_notional.
var errBelowMin = errors.New("order value below min_notional")

// belowMin judges the minimum order value as Paradex does: size times the
// mark price, whatever the limit price; a reduce-only order is exempt
// (https://docs.paradex.trade/trading/placing-orders, "Minimum Order
// Value"). Paradex closes such an order with ORDER_SIZE_BELOW_MIN
// (recorded, issue 28).
func (s *Server) belowMin(r paper.OrderRequest) error {
	p, err := s.eng.MarkPrice(r.Market)
	if err != nil || r.ReduceOnly {
		return nil
	}
	if r.Size.Mul(p.Mark).LessThan(s.spec(r.Market).MinNotional) {
		return errBelowMin
	}
	return nil
}

// stopType is the paper trigger of a STOP_MARKET order: Paradex fires it
// when the mark reaches trigger_price from where the mark is at placement,
// for either side (recorded answers, issue 28), so one against the side (a
// buy above the mark) is the engine's stop, the other its take-profit.
func (s *Server) stopType(r paper.OrderRequest) paper.OrderType {
	p, err := s.eng.MarkPrice(r.Market)
	if err != nil || r.TriggerPrice.GreaterThan(p.Mark) == (r.Side == paper.Buy) {
		return paper.StopMarket
	}
	return paper.TakeProfitMarket
}

// validate checks an order as Paradex does before answering 201: shape,
// market rules and the Stark signature over the Order message.
func (s *Server) validate(q *req, b stark.OrderRequest) *apiErr {
	m, e := s.market(b.Market)
	if e != nil {
		return e
	}
	if b.Side != "BUY" && b.Side != "SELL" {
		return errf(http.StatusBadRequest, "VALIDATION_ERROR", "side must be BUY or SELL")
	}
	if _, ok := orderTypes[b.Type]; !ok {
		return errf(http.StatusBadRequest, "VALIDATION_ERROR", "the simulator takes LIMIT, MARKET, STOP_MARKET, STOP_LOSS_MARKET, TAKE_PROFIT_MARKET")
	}
	switch b.Instruction {
	case "", "GTC", "IOC", "POST_ONLY":
	default:
		return errf(http.StatusBadRequest, "VALIDATION_ERROR", "instruction must be GTC, IOC or POST_ONLY")
	}
	size, err := decimal.NewFromString(b.Size)
	if err != nil || !size.IsPositive() || !size.Mod(m.LotSize).IsZero() {
		return errf(http.StatusBadRequest, "INVALID_ORDER_SIZE", "size %q must be a positive multiple of %s", b.Size, m.LotSize)
	}
	if b.Type == "LIMIT" {
		p, err := decimal.NewFromString(b.Price)
		if err != nil || !p.IsPositive() || !p.Mod(m.TickSize).IsZero() {
			return errf(http.StatusBadRequest, "INVALID_PRICE_PRECISION", "price %q must be a positive multiple of %s", b.Price, m.TickSize)
		}
	}
	if strings.Contains(b.Type, "STOP") || strings.Contains(b.Type, "TAKE_PROFIT") {
		t, err := decimal.NewFromString(b.TriggerPrice)
		if err != nil || !t.IsPositive() || !t.Mod(m.TickSize).IsZero() {
			return errf(http.StatusBadRequest, "VALIDATION_ERROR", "trigger_price %q must be a positive multiple of %s", b.TriggerPrice, m.TickSize)
		}
	}
	if len(b.ClientID) > 64 {
		return errf(http.StatusBadRequest, "VALIDATION_ERROR", "client_id longer than 64 characters")
	}
	if b.ClientID != "" && s.byClient(q.account, b.ClientID) != nil {
		return errf(http.StatusBadRequest, "DUPLICATED_CLIENT_ID", "client_id %q already used", b.ClientID)
	}
	now := q.now.UnixMilli()
	if b.SignatureTimestamp > now+60_000 || (b.RecvWindow > 0 && now-b.SignatureTimestamp > b.RecvWindow) {
		return errf(http.StatusBadRequest, "INVALID_TIMESTAMP", "signature_timestamp %d outside the window at %d", b.SignatureTimestamp, now)
	}
	return s.checkSignature(q.account, b)
}

func (s *Server) checkSignature(account string, b stark.OrderRequest) *apiErr {
	pub, _ := s.Secret(account)
	addr, _ := stark.ParseFelt(account)
	msg, err := b.SignedMessage()
	if err != nil {
		return errf(http.StatusBadRequest, "VALIDATION_ERROR", "%v", err)
	}
	r, sv, err := stark.ParseSignature(b.Signature)
	if err != nil || pub == nil || !stark.Verify(pub, stark.OrderHash(s.cfg.ChainID, addr, msg), r, sv) {
		return errf(http.StatusBadRequest, "INVALID_ORDER_SIGNATURE", "order signature verification failed")
	}
	return nil
}

// accept queues a validated order: 201 NEW, risk checks at the next request.
func (s *Server) accept(q *req, b stark.OrderRequest) *order {
	o := &order{ID: s.nextID(q.now), Account: q.account, Req: b, Created: q.now, intake: true}
	s.mu.Lock()
	s.orders[o.ID] = o
	s.intake = append(s.intake, o)
	s.mu.Unlock()
	s.feed.push(o.Account, "orders", b.Market, s.row(o, nil)) // NEW
	return o
}

// https://docs.paradex.trade/api/prod/orders/new: 201 with the order as queued (status NEW).
func (s *Server) create(q *req) (int, any, *apiErr) {
	var b stark.OrderRequest
	if err := json.Unmarshal(q.body, &b); err != nil {
		return 0, nil, errf(http.StatusBadRequest, "BINDING_ERROR", "%v", err)
	}
	if e := s.validate(q, b); e != nil {
		return 0, nil, e
	}
	return http.StatusCreated, s.view(s.accept(q, b)), nil
}

// https://docs.paradex.trade/api/prod/orders/new-batch: 1 to 10 orders; a bad signature fails the whole
// batch, otherwise each order stands alone: {"orders":[...],"errors":[...]}.
func (s *Server) createBatch(q *req) (int, any, *apiErr) {
	var bs []stark.OrderRequest
	if err := json.Unmarshal(q.body, &bs); err != nil {
		return 0, nil, errf(http.StatusBadRequest, "BINDING_ERROR", "%v", err)
	}
	if len(bs) < 1 || len(bs) > 10 {
		return 0, nil, errf(http.StatusBadRequest, "BATCH_SIZE_OUT_OF_RANGE", "a batch takes 1 to 10 orders")
	}
	for _, b := range bs {
		if e := s.checkSignature(q.account, b); e != nil {
			return 0, nil, e
		}
	}
	orders, errs := []map[string]any{}, []map[string]any{}
	for _, b := range bs {
		if e := s.validate(q, b); e != nil {
			errs = append(errs, map[string]any{"error": e.code, "message": e.msg})
			continue
		}
		orders = append(orders, s.view(s.accept(q, b)))
	}
	return http.StatusCreated, map[string]any{"orders": orders, "errors": errs}, nil
}

// runIntake runs the risk checks of queued orders on the paper engine.
func (s *Server) runIntake(now time.Time) {
	s.mu.Lock()
	if s.hold > 0 {
		s.hold--
		s.mu.Unlock()
		return
	}
	queue := s.intake
	s.intake = nil
	s.mu.Unlock()
	for _, o := range queue {
		s.process(o)
	}
}

func (s *Server) process(o *order) {
	// The engine's events of this placement wait (feed.barrier) until the
	// Paradex id is mapped, so the private stream can name the order.
	s.feed.barrier.Lock()
	defer s.feed.barrier.Unlock()
	defer func() {
		if o.frozen { // closed without reaching the engine; after s.mu is released
			s.feed.push(o.Account, "orders", o.Req.Market, s.row(o, nil))
		}
	}()
	b := o.Req
	size, _ := decimal.NewFromString(b.Size)
	r := paper.OrderRequest{Market: b.Market, Side: paper.Side(b.Side), Type: orderTypes[b.Type], Size: size,
		PostOnly: b.Instruction == "POST_ONLY", ClientOrderID: b.ClientID}
	for _, f := range b.Flags {
		r.ReduceOnly = r.ReduceOnly || f == "REDUCE_ONLY"
	}
	if r.Type == paper.Limit {
		r.Price, _ = decimal.NewFromString(b.Price)
	}
	if b.TriggerPrice != "" {
		r.TriggerPrice, _ = decimal.NewFromString(b.TriggerPrice)
	}
	if b.Type == "STOP_MARKET" {
		r.Type = s.stopType(r)
	}
	var po paper.Order
	err := s.belowMin(r)
	if err == nil {
		po, err = s.eng.PlaceOrder(o.Account, r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o.intake = false
	switch {
	case errors.Is(err, paper.ErrPostOnlyWouldCross):
		o.frozen, o.Reason = true, "POST_ONLY_WOULD_CROSS"
	case errors.Is(err, paper.ErrInsufficientMargin):
		o.frozen, o.Reason = true, "NOT_ENOUGH_MARGIN"
	case errors.Is(err, paper.ErrReduceOnly):
		o.frozen, o.Reason = true, "REDUCE_ONLY_WOULD_INCREASE"
	case errors.Is(err, errBelowMin):
		o.frozen, o.Reason = true, "ORDER_SIZE_BELOW_MIN"
	case err != nil:
		o.frozen, o.Reason = true, "ORDER_REJECTED"
	default:
		o.PaperID = po.ID
		s.byPaper[o.Account+" "+po.ID] = o.ID
	}
	if !o.frozen && b.Instruction == "IOC" && po.Status == paper.Open {
		_, _ = s.eng.CancelOrder(o.Account, po.ID)
	}
}

// view renders an order as OrderResp (orders/get-order).
func (s *Server) view(o *order) map[string]any {
	s.mu.Lock()
	pid := o.PaperID
	s.mu.Unlock()
	var po *paper.Order
	if pid != "" {
		if p, err := s.eng.Order(o.Account, pid); err == nil {
			po = &p
		}
	}
	return s.row(o, po)
}

// row renders an order as OrderResp with po its paper state (nil before
// the engine took it).
func (s *Server) row(o *order, po *paper.Order) map[string]any {
	s.mu.Lock()
	intake, frozen, reason, pid := o.intake, o.frozen, o.Reason, o.PaperID
	s.mu.Unlock()
	b := o.Req
	price := b.Price
	if strings.Contains(b.Type, "MARKET") || price == "" {
		price = "0"
	}
	row := map[string]any{
		"id": o.ID, "account": o.Account, "market": b.Market, "side": b.Side, "type": b.Type, "size": b.Size,
		"remaining_size": b.Size, "price": price, "trigger_price": b.TriggerPrice, "client_id": b.ClientID,
		"instruction": instruction(b.Instruction), "flags": nonNil(b.Flags), "status": "NEW", "cancel_reason": "",
		"avg_fill_price": "", "created_at": o.Created.UnixMilli(), "last_updated_at": o.Created.UnixMilli(),
		"timestamp": b.SignatureTimestamp, "seq_no": o.Created.UnixMilli(), "stp": "EXPIRE_TAKER",
		"received_at": o.Created.UnixMilli(), "published_at": o.Created.UnixMilli(),
	}
	switch {
	case intake:
	case frozen:
		row["status"], row["cancel_reason"] = "CLOSED", reason
	case pid != "" && po != nil:
		row["remaining_size"] = po.Size.Sub(po.FilledSize).String()
		row["size"] = po.Size.String()
		if po.FilledSize.IsPositive() {
			row["avg_fill_price"] = po.AvgFillPrice.String()
		}
		row["last_updated_at"] = po.UpdatedAt.UnixMilli()
		row["seq_no"] = po.UpdatedAt.UnixNano()
		switch po.Status {
		case paper.Open:
			row["status"] = "OPEN"
		case paper.Pending:
			row["status"] = "UNTRIGGERED"
		case paper.Filled:
			row["status"] = "CLOSED"
		case paper.Cancelled:
			row["status"], row["cancel_reason"] = "CLOSED", "USER_CANCELED"
			if b.Instruction == "IOC" || b.Type == "MARKET" {
				row["cancel_reason"] = "REMAINING_IOC_CANCEL"
			}
			if po.Reason != "" && strings.Contains(po.Reason, "position") {
				row["cancel_reason"] = "REDUCE_ONLY_WOULD_INCREASE"
			}
		default:
			row["status"], row["cancel_reason"] = "CLOSED", "ORDER_REJECTED"
			if strings.Contains(po.Reason, "margin") {
				row["cancel_reason"] = "NOT_ENOUGH_MARGIN"
			}
		}
	}
	return row
}

func instruction(v string) string {
	if v == "" {
		return "GTC"
	}
	return v
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

func (s *Server) byClient(account, id string) *order {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.orders {
		if o.Account == account && o.Req.ClientID == id {
			return o
		}
	}
	return nil
}

// mine lists an account's orders, newest first.
func (s *Server) mine(account, market string) []*order {
	s.mu.Lock()
	var out []*order
	for _, o := range s.orders {
		if o.Account == account && (market == "" || o.Req.Market == market) {
			out = append(out, o)
		}
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out
}

func isOpen(row map[string]any) bool {
	switch row["status"] {
	case "NEW", "OPEN", "UNTRIGGERED":
		return true
	}
	return false
}

// https://docs.paradex.trade/api/prod/orders/get-open-orders: NEW, UNTRIGGERED and OPEN orders.
func (s *Server) openOrders(q *req) (int, any, *apiErr) {
	var rows []map[string]any
	for _, o := range s.mine(q.account, q.get("market")) {
		if row := s.view(o); isOpen(row) {
			rows = append(rows, row)
		}
	}
	return ok(results(rows))
}

// https://docs.paradex.trade/api/prod/orders/get-orders (orders-history): every state, filters market and
// client_id.
func (s *Server) ordersHistory(q *req) (int, any, *apiErr) {
	var rows []map[string]any
	for _, o := range s.mine(q.account, q.get("market")) {
		if c := q.get("client_id"); c != "" && o.Req.ClientID != c {
			continue
		}
		rows = append(rows, s.view(o))
	}
	return ok(results(rows))
}

// https://docs.paradex.trade/api/prod/orders/get-order
func (s *Server) getOrder(q *req) (int, any, *apiErr) {
	s.mu.Lock()
	o := s.orders[q.r.PathValue("id")]
	s.mu.Unlock()
	if o == nil || o.Account != q.account {
		return 0, nil, errf(http.StatusNotFound, "ORDER_ID_NOT_FOUND", "order %s not found", q.r.PathValue("id"))
	}
	return ok(s.view(o))
}

// https://docs.paradex.trade/api/prod/orders/get-by-client-id
func (s *Server) getByClientID(q *req) (int, any, *apiErr) {
	o := s.byClient(q.account, q.r.PathValue("clientID"))
	if o == nil || (q.get("market") != "" && o.Req.Market != q.get("market")) {
		return 0, nil, errf(http.StatusNotFound, "CLIENT_ORDER_ID_NOT_FOUND", "client order id %s not found", q.r.PathValue("clientID"))
	}
	return ok(s.view(o))
}

// cancelOne cancels an order, queued or resting; false when closed.
func (s *Server) cancelOne(o *order) bool {
	s.mu.Lock()
	if o.intake {
		o.intake, o.frozen, o.Reason = false, true, "USER_CANCELED"
		kept := s.intake[:0]
		for _, x := range s.intake {
			if x != o {
				kept = append(kept, x)
			}
		}
		s.intake = kept
		s.mu.Unlock()
		s.feed.push(o.Account, "orders", o.Req.Market, s.row(o, nil))
		return true
	}
	frozen, pid := o.frozen, o.PaperID
	s.mu.Unlock()
	if frozen {
		return false
	}
	_, err := s.eng.CancelOrder(o.Account, pid)
	return err == nil
}

// https://docs.paradex.trade/api/prod/orders/cancel-order: 204, queued for cancellation.
func (s *Server) cancel(q *req) (int, any, *apiErr) {
	s.mu.Lock()
	o := s.orders[q.r.PathValue("id")]
	s.mu.Unlock()
	if o == nil || o.Account != q.account {
		return 0, nil, errf(http.StatusNotFound, "ORDER_ID_NOT_FOUND", "order %s not found", q.r.PathValue("id"))
	}
	if !s.cancelOne(o) {
		return 0, nil, errf(http.StatusBadRequest, "ORDER_IS_CLOSED", "order %s is closed", o.ID)
	}
	return http.StatusNoContent, nil, nil
}

// https://docs.paradex.trade/api/prod/orders/cancel-all-open-orders: every open order (of market when given).
func (s *Server) cancelAll(q *req) (int, any, *apiErr) {
	if m := q.get("market"); m != "" {
		if _, e := s.market(m); e != nil {
			return 0, nil, e
		}
	}
	for _, o := range s.mine(q.account, q.get("market")) {
		if isOpen(s.view(o)) {
			s.cancelOne(o)
		}
	}
	return ok(map[string]any{})
}
