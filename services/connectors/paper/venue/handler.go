package venue

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/appendlog"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// maxBody bounds request bodies.
const maxBody = 64 << 10

type handler struct {
	e   *paper.Engine
	log *slog.Logger
}

// NewHandler serves e's JSON API (routes in the package doc).
func NewHandler(e *paper.Engine) http.Handler {
	return newHandler(e, slog.New(slog.DiscardHandler))
}

func newHandler(e *paper.Engine, log *slog.Logger) http.Handler {
	h := &handler{e: e, log: log}
	mux := http.NewServeMux()
	route := func(pattern string, fn func(r *http.Request) (any, error)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			v, err := fn(r)
			if err != nil {
				h.writeError(w, r, err)
				return
			}
			writeJSON(w, http.StatusOK, v)
		})
	}
	route("GET /v1/markets", h.markets)
	route("GET /v1/markets/{market}", h.market)
	route("GET /v1/markets/{market}/book", h.book)
	route("GET /v1/markets/{market}/mark", h.mark)
	route("PUT /v1/markets/{market}/mark", h.setMark)
	route("GET /v1/markets/{market}/candles", h.candles)
	route("GET /v1/markets/{market}/funding", h.funding)
	route("GET /v1/fees", h.fees)
	route("PUT /v1/accounts/{account}", h.ensureAccount)
	route("GET /v1/accounts/{account}/balance", h.balance)
	route("GET /v1/accounts/{account}/positions", h.positions)
	route("POST /v1/accounts/{account}/positions/{market}/close", h.closePosition)
	route("GET /v1/accounts/{account}/orders", h.orders)
	route("POST /v1/accounts/{account}/orders", h.placeOrder)
	route("DELETE /v1/accounts/{account}/orders", h.cancelAll)
	route("GET /v1/accounts/{account}/orders/{id}", h.order)
	route("DELETE /v1/accounts/{account}/orders/{id}", h.cancelOrder)
	route("PATCH /v1/accounts/{account}/orders/{id}", h.amendOrder)
	route("GET /v1/accounts/{account}/fills", h.fills)
	route("GET /v1/accounts/{account}/funding", h.fundingPayments)
	route("GET /v1/accounts/{account}/leverage/{market}", h.leverage)
	route("PUT /v1/accounts/{account}/leverage/{market}", h.setLeverage)
	mux.HandleFunc("GET /v1/stream", func(w http.ResponseWriter, r *http.Request) { serveStream(e, w, r) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, ErrorBody{Error: ErrorDetail{Kind: KindNotFound, Message: "no route " + r.Method + " " + r.URL.Path}})
	})
	return mux
}

func (h *handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e, ok := toError(err)
	if !ok {
		h.log.Error("paper venue fault", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, e.Status, ErrorBody{Error: ErrorDetail{Kind: e.Kind, Message: e.Message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads a JSON body strictly into v.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody+1))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return badRequest("request body is empty, want a JSON object")
		}
		return badRequest("request body: %v", err)
	}
	if dec.More() {
		return badRequest("request body has data after the JSON object")
	}
	return nil
}

// intQuery parses an optional integer query parameter; absent means zero.
func intQuery(r *http.Request, name string) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, badRequest("query parameter %s=%q is not an integer", name, s)
	}
	return n, nil
}

func (h *handler) markets(*http.Request) (any, error) {
	ms := h.e.Markets()
	out := MarketsResponse{Markets: make([]MarketInfo, len(ms))}
	for i, m := range ms {
		out.Markets[i] = marketInfo(m)
	}
	return out, nil
}

func (h *handler) market(r *http.Request) (any, error) {
	m, err := h.e.Market(r.PathValue("market"))
	if err != nil {
		return nil, err
	}
	return marketInfo(m), nil
}

func (h *handler) book(r *http.Request) (any, error) {
	depth, err := intQuery(r, "depth")
	if err != nil {
		return nil, err
	}
	if depth < 0 {
		return nil, badRequest("depth %d must be positive", depth)
	}
	b, err := h.e.Orderbook(r.PathValue("market"), depth)
	if err != nil {
		return nil, err
	}
	return Orderbook{Market: b.Market, Bids: levels(b.Bids), Asks: levels(b.Asks), Time: b.Time.Unix()}, nil
}

func (h *handler) mark(r *http.Request) (any, error) {
	p, err := h.e.MarkPrice(r.PathValue("market"))
	if err != nil {
		return nil, err
	}
	return markPrice(p), nil
}

func (h *handler) setMark(r *http.Request) (any, error) {
	var req SetMarkRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	p, err := h.e.SetMarkPrice(r.PathValue("market"), req.Price)
	if err != nil {
		return nil, err
	}
	return markPrice(p), nil
}

func (h *handler) candles(r *http.Request) (any, error) {
	interval, err := intQuery(r, "interval")
	if err != nil {
		return nil, err
	}
	if interval == 0 {
		interval = 60
	}
	limit, err := intQuery(r, "limit")
	if err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, badRequest("limit %d must be positive", limit)
	}
	cs, err := h.e.Candles(r.PathValue("market"), interval, limit)
	if err != nil {
		return nil, err
	}
	m, err := h.e.Market(r.PathValue("market"))
	if err != nil {
		return nil, err
	}
	out := CandlesResponse{Market: m.Symbol, Interval: interval, Candles: make([]Candle, len(cs))}
	for i, c := range cs {
		out.Candles[i] = Candle{Time: c.Time.Unix(), Open: c.Open, High: c.High, Low: c.Low, Close: c.Close, Volume: c.Volume}
	}
	return out, nil
}

func (h *handler) funding(r *http.Request) (any, error) {
	f, err := h.e.Funding(r.PathValue("market"))
	if err != nil {
		return nil, err
	}
	return Funding{Market: f.Market, FundingRate: f.Rate, NextFundingTime: f.NextTime.Unix(), IntervalSeconds: int64(f.Interval.Seconds())}, nil
}

func (h *handler) fees(*http.Request) (any, error) {
	f := h.e.Fees()
	return Fees{MakerFeeBps: f.MakerBps, TakerFeeBps: f.TakerBps}, nil
}

func (h *handler) ensureAccount(r *http.Request) (any, error) {
	var req AccountRequest
	if r.ContentLength != 0 {
		if err := decode(r, &req); err != nil {
			return nil, err
		}
	}
	b, err := h.e.EnsureAccount(r.PathValue("account"), req.StartingBalance)
	if err != nil {
		return nil, err
	}
	return balance(b), nil
}

func (h *handler) balance(r *http.Request) (any, error) {
	b, err := h.e.Balance(r.PathValue("account"))
	if err != nil {
		return nil, err
	}
	return balance(b), nil
}

func (h *handler) positions(r *http.Request) (any, error) {
	ps, err := h.e.Positions(r.PathValue("account"), r.URL.Query().Get("market"))
	if err != nil {
		return nil, err
	}
	out := PositionsResponse{Positions: make([]Position, len(ps))}
	for i, p := range ps {
		out.Positions[i] = Position{
			Market: p.Market, Side: string(p.Side), Size: p.Size, EntryPrice: p.EntryPrice, MarkPrice: p.MarkPrice,
			UnrealizedPnl: p.UnrealizedPnL, Notional: p.Notional, Margin: p.Margin, Leverage: p.Leverage,
		}
	}
	return out, nil
}

func (h *handler) closePosition(r *http.Request) (any, error) {
	c, err := h.e.ClosePosition(r.PathValue("account"), r.PathValue("market"))
	if err != nil {
		return nil, err
	}
	return CloseResponse{Market: c.Market, ClosedSize: c.ClosedSize, AvgClosePrice: c.AvgClosePrice, OrderID: c.OrderID}, nil
}

func (h *handler) orders(r *http.Request) (any, error) {
	acct := r.PathValue("account")
	if cid := r.URL.Query().Get("clientOrderId"); cid != "" {
		o, err := h.e.OrderByClientID(acct, cid)
		if err != nil {
			return nil, err
		}
		return OrdersResponse{Orders: []Order{order(o)}}, nil
	}
	os, err := h.e.OpenOrders(acct, r.URL.Query().Get("market"))
	if err != nil {
		return nil, err
	}
	out := OrdersResponse{Orders: make([]Order, len(os))}
	for i, o := range os {
		out.Orders[i] = order(o)
	}
	return out, nil
}

func (h *handler) placeOrder(r *http.Request) (any, error) {
	var req OrderRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	pr := paper.OrderRequest{
		Market:         req.Market,
		Side:           paper.Side(req.Side),
		Type:           paper.OrderType(req.Type),
		Size:           req.Size,
		Price:          req.Price,
		TriggerPrice:   req.TriggerPrice,
		PostOnly:       req.PostOnly,
		ReduceOnly:     req.ReduceOnly,
		ClientOrderID:  req.ClientOrderID,
		PositionLinked: req.PositionLinked,
	}
	var o paper.Order
	var err error
	// A caller in this process (the standalone gateway's connector) that
	// makes a durable write of its own before it answers waits for the
	// journal at the same time; over HTTP the answer waits for it here.
	// One that holds its idempotency claim back hands it over: the claim
	// goes in the order's own journal record, so neither is durable
	// without the other, and the result follows as a note.
	if b := appendlog.BarrierFrom(r.Context()); b != nil {
		var wait func() error
		o, wait, err = h.e.PlaceOrderNoted(r.PathValue("account"), pr, b.Take(h.e.NoteDeferred))
		b.Defer(wait)
	} else {
		o, err = h.e.PlaceOrder(r.PathValue("account"), pr)
	}
	if err != nil {
		return nil, err
	}
	return order(o), nil
}

func (h *handler) cancelAll(r *http.Request) (any, error) {
	n, err := h.e.CancelAll(r.PathValue("account"), r.URL.Query().Get("market"))
	if err != nil {
		return nil, err
	}
	return CancelAllResponse{CancelledCount: n}, nil
}

func (h *handler) order(r *http.Request) (any, error) {
	o, err := h.e.Order(r.PathValue("account"), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return order(o), nil
}

func (h *handler) cancelOrder(r *http.Request) (any, error) {
	o, err := h.e.CancelOrder(r.PathValue("account"), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return order(o), nil
}

func (h *handler) fills(r *http.Request) (any, error) {
	limit, err := intQuery(r, "limit")
	if err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, badRequest("limit %d must be positive", limit)
	}
	fs, err := h.e.Fills(r.PathValue("account"), r.URL.Query().Get("market"), limit)
	if err != nil {
		return nil, err
	}
	out := FillsResponse{Fills: make([]Fill, len(fs))}
	for i, f := range fs {
		out.Fills[i] = Fill{
			ID: f.ID, OrderID: f.OrderID, ClientOrderID: f.ClientOrderID, Market: f.Market, Side: string(f.Side),
			Size: f.Size, Price: f.Price, Fee: f.Fee, Liquidity: string(f.Liquidity), RealizedPnl: f.RealizedPnL,
			Timestamp: f.Time.Unix(),
		}
	}
	return out, nil
}

func (h *handler) leverage(r *http.Request) (any, error) {
	l, err := h.e.Leverage(r.PathValue("account"), r.PathValue("market"))
	if err != nil {
		return nil, err
	}
	return h.leverageResponse(r, l)
}

func (h *handler) setLeverage(r *http.Request) (any, error) {
	var req LeverageRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	l, err := h.e.SetLeverage(r.PathValue("account"), r.PathValue("market"), req.Leverage)
	if err != nil {
		return nil, err
	}
	return h.leverageResponse(r, l)
}

func (h *handler) leverageResponse(r *http.Request, l int) (any, error) {
	m, err := h.e.Market(r.PathValue("market"))
	if err != nil {
		return nil, err
	}
	return LeverageResponse{Market: m.Symbol, Leverage: l}, nil
}

func marketInfo(m paper.MarketInfo) MarketInfo {
	return MarketInfo{
		Symbol: m.Symbol, Base: m.Base, Quote: m.Quote, TickSize: m.TickSize, LotSize: m.LotSize,
		MinNotional: m.MinNotional, MaxLeverage: m.MaxLeverage, MarkPrice: m.MarkPrice, IndexPrice: m.IndexPrice,
		FundingRate: m.FundingRate, NextFundingTime: m.NextFundingTime.Unix(), OpenInterest: m.OpenInterest,
		FundingIntervalSeconds: int64(m.FundingInterval / time.Second),
	}
}

func markPrice(p paper.Prices) MarkPrice {
	return MarkPrice{Market: p.Market, MarkPrice: p.Mark, IndexPrice: p.Index, Time: p.Time.Unix()}
}

func levels(ls []paper.Level) [][2]decimal.Decimal {
	out := make([][2]decimal.Decimal, len(ls))
	for i, l := range ls {
		out[i] = [2]decimal.Decimal{l.Price, l.Size}
	}
	return out
}

func balance(b paper.Balance) Balance {
	return Balance{
		Account: b.Account, Wallet: b.Wallet, UnrealizedPnl: b.UnrealizedPnL, Equity: b.Equity,
		AccountValue: b.AccountValue, PositionMargin: b.PositionMargin, OrderMargin: b.OrderMargin,
		FreeCollateral: b.FreeCollateral, RealizedPnl: b.RealizedPnL, FeesPaid: b.FeesPaid, FundingPaid: b.FundingPaid,
	}
}

func order(o paper.Order) Order {
	return Order{
		ID: o.ID, ClientOrderID: o.ClientOrderID, Market: o.Market, Side: string(o.Side), Type: string(o.Type),
		Size: o.Size, Price: o.Price, TriggerPrice: o.TriggerPrice, FilledSize: o.FilledSize,
		AvgFillPrice: o.AvgFillPrice, Fee: o.Fee, PostOnly: o.PostOnly, ReduceOnly: o.ReduceOnly,
		Status: string(o.Status), Reason: o.Reason, CreatedAt: o.CreatedAt.Unix(), UpdatedAt: o.UpdatedAt.Unix(),
	}
}
