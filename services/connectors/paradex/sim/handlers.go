package sim

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/services/connectors/paradex/stark"
	"github.com/shopspring/decimal"
)

// req is one request as a handler sees it.
type req struct {
	r       *http.Request
	account string // 0x address, private calls only
	body    []byte
	now     time.Time
}

func (q *req) get(name string) string { return q.r.URL.Query().Get(name) }

type handler func(q *req) (int, any, *apiErr)

// routes registers every endpoint; private ones check the JWT first.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	add := func(pattern string, private bool, h handler) {
		method, path, _ := strings.Cut(pattern, " ")
		mux.HandleFunc(pattern, func(rw http.ResponseWriter, r *http.Request) {
			now := s.cfg.Now()
			s.Hit(method, path)
			s.runIntake(now)
			raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			q := &req{r: r, body: raw, now: now}
			class, who := "public", ""
			if strings.HasPrefix(path, "/v1/auth") {
				class = "auth"
			}
			if private {
				acct, e := s.bearer(r, now)
				if e != nil {
					writeErr(rw, e)
					return
				}
				q.account = acct
				class, who = "orders", acct
				if method == http.MethodGet {
					class = "read"
				}
			}
			if e := s.charge(rw, class, who, now); e != nil {
				writeErr(rw, e)
				return
			}
			if f, ok := s.NextFailure(method, path); ok {
				if f.After {
					_, _, _ = h(q)
				}
				if f.Status == http.StatusTooManyRequests {
					rw.Header().Set("x-ratelimit-remaining", "0")
					rw.Header().Set("x-ratelimit-reset", strconv.FormatInt(now.Add(2*time.Second).UnixMilli(), 10))
				}
				writeErr(rw, &apiErr{status: f.Status, code: f.Code, msg: f.Message})
				return
			}
			status, out, e := h(q)
			if e != nil {
				writeErr(rw, e)
				return
			}
			write(rw, status, out)
		})
	}
	mux.HandleFunc("GET /v1", s.serveStream) // the websocket, on the same host
	add("GET /v1/system/config", false, s.systemConfig)
	add("GET /v1/system/time", false, s.systemTime)
	add("GET /v1/system/state", false, s.systemState)
	add("GET /v1/markets", false, s.markets)
	add("GET /v1/markets/summary", false, s.summary)
	add("GET /v1/markets/klines", false, s.klines)
	add("GET /v1/orderbook/{market}", false, s.orderbook)
	add("POST /v1/auth", false, s.auth)
	add("POST /v1/auth/{publicKey}", false, s.auth)
	add("GET /v1/account", true, s.account)
	add("GET /v1/balance", true, s.balance)
	add("GET /v1/positions", true, s.positions)
	add("GET /v1/fills", true, s.fills)
	add("GET /v1/funding/payments", true, s.fundingPayments)
	add("GET /v1/orders", true, s.openOrders)
	add("GET /v1/orders-history", true, s.ordersHistory)
	add("GET /v1/orders/{id}", true, s.getOrder)
	add("GET /v1/orders/by_client_id/{clientID}", true, s.getByClientID)
	add("POST /v1/orders", true, s.create)
	add("POST /v1/orders/batch", true, s.createBatch)
	add("DELETE /v1/orders/{id}", true, s.cancel)
	add("PUT /v1/orders/{id}", true, s.modify)
	add("DELETE /v1/orders", true, s.cancelAll)
	add("POST /v1/account/margin/{market}", true, s.setMargin)
	add("GET /v1/account/margin", true, s.getMargin)
	return mux
}

// ServeHTTP implements http.Handler; unknown paths are 404.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(rw, r) }

func ok(v any) (int, any, *apiErr) { return http.StatusOK, v, nil }

func results[T any](rows []T) map[string]any {
	if rows == nil {
		rows = []T{}
	}
	return map[string]any{"results": rows}
}

// https://docs.paradex.trade/api/prod/system/get-system-config
func (s *Server) systemConfig(q *req) (int, any, *apiErr) {
	return ok(map[string]any{"starknet_chain_id": s.cfg.ChainID, "l1_chain_id": "1", "paraclear_decimals": 8,
		"paraclear_address": "0x0", "paraclear_account_hash": "0x41cb0280ebadaa75f996d8d92c6f265f6d040bb3ba442e5f86a554f1765244e",
		"paraclear_account_proxy_hash": "0x3530cc4759d78042f1b543bf797f5f3d647cde0388c33734cf91b7f7b9314a9"})
}

// https://docs.paradex.trade/api/prod/system/get-time-unix-milliseconds: server_time is a string of ms.
func (s *Server) systemTime(q *req) (int, any, *apiErr) {
	return ok(map[string]string{"server_time": strconv.FormatInt(q.now.UnixMilli(), 10)})
}

// https://docs.paradex.trade/api/prod/system/get-system-state
func (s *Server) systemState(q *req) (int, any, *apiErr) {
	return ok(map[string]string{"status": "ok"})
}

func (s *Server) market(sym string) (paper.MarketInfo, *apiErr) {
	m, err := s.eng.Market(sym)
	if err != nil || m.Symbol != sym {
		return paper.MarketInfo{}, errf(http.StatusBadRequest, "MARKET_NOT_FOUND", "market %q not found", sym)
	}
	return m, nil
}

func (s *Server) spec(sym string) paper.MarketSpec {
	for _, sp := range s.cfg.Markets {
		if sp.Symbol == sym {
			return sp
		}
	}
	return paper.MarketSpec{}
}

// https://docs.paradex.trade/api/prod/markets/get-markets: perpetuals and, sharing the endpoint, an option
// (asset_kind OPTION) the connector must leave out.
func (s *Server) markets(q *req) (int, any, *apiErr) {
	fees := s.eng.Fees()
	rate := func(bps decimal.Decimal) string { return bps.Div(decimal.NewFromInt(10000)).String() }
	var rows []map[string]any
	for _, m := range s.eng.Markets() {
		if want := q.get("market"); want != "" && want != m.Symbol {
			continue
		}
		lev := s.spec(m.Symbol).MaxLeverage
		imf := decimal.NewFromInt(1).DivRound(decimal.NewFromInt(int64(max(lev, 1))), 8)
		base, _, _ := strings.Cut(m.Symbol, "-")
		row := map[string]any{
			"symbol": m.Symbol, "base_currency": base, "quote_currency": "USD", "settlement_currency": "USDC", "asset_kind": "PERP",
			"market_kind": "cross", "price_tick_size": m.TickSize.String(), "order_size_increment": m.LotSize.String(),
			"min_notional": s.spec(m.Symbol).MinNotional.String(), "max_order_size": "100000000", "position_limit": "100000000", "max_open_orders": 150,
			"funding_period_hours": s.cfg.FundingPeriodHours, "max_funding_rate": "0.05", "price_bands_width": "0.05",
			"max_slippage": "0.05", "open_at": 1700000000000, "expiry_at": 0, "tags": []string{},
			"delta1_cross_margin_params": map[string]string{"imf_base": imf.String(), "imf_factor": "0", "imf_shift": "0", "mmf_factor": "0.5"},
			"fee_config": map[string]any{
				"api_fee":         map[string]any{"maker_fee": map[string]string{"fee": rate(fees.MakerBps)}, "taker_fee": map[string]string{"fee": rate(fees.TakerBps)}},
				"interactive_fee": map[string]any{"maker_fee": map[string]string{"fee": "0"}, "taker_fee": map[string]string{"fee": "0"}},
			},
		}
		if s.cfg.NoFeeConfig[m.Symbol] {
			delete(row, "fee_config")
		}
		rows = append(rows, row)
	}
	if q.get("market") == "" {
		rows = append(rows, map[string]any{"symbol": "BTC-USD-96000-C", "base_currency": "BTC", "quote_currency": "USD",
			"settlement_currency": "USDC", "asset_kind": "PERP_OPTION", "price_tick_size": "0.1", "order_size_increment": "0.001"})
	}
	return ok(results(rows))
}

func summaryRow(m paper.MarketInfo, now time.Time) map[string]any {
	return map[string]any{"symbol": m.Symbol, "mark_price": m.MarkPrice.String(), "underlying_price": m.IndexPrice.String(),
		"last_traded_price": m.MarkPrice.String(), "bid": m.MarkPrice.String(), "ask": m.MarkPrice.String(), "volume_24h": "0",
		"total_volume": "0", "price_change_rate_24h": "0", "funding_rate": m.FundingRate.String(),
		"open_interest": m.OpenInterest.String(), "created_at": now.UnixMilli()}
}

// https://docs.paradex.trade/api/prod/markets/get-markets-summary: market is required, ALL for every market.
func (s *Server) summary(q *req) (int, any, *apiErr) {
	want := q.get("market")
	if want == "" {
		return 0, nil, errf(http.StatusBadRequest, "VALIDATION_ERROR", "market is required")
	}
	var rows []map[string]any
	for _, m := range s.eng.Markets() {
		if want == "ALL" || want == m.Symbol {
			rows = append(rows, summaryRow(m, q.now))
		}
	}
	if want != "ALL" && len(rows) == 0 {
		return 0, nil, errf(http.StatusBadRequest, "MARKET_NOT_FOUND", "market %q not found", want)
	}
	return ok(results(rows))
}

// https://docs.paradex.trade/api/prod/markets/get-orderbook: levels are [price, size] strings, depth default 20.
func (s *Server) orderbook(q *req) (int, any, *apiErr) {
	m, e := s.market(q.r.PathValue("market"))
	if e != nil {
		return 0, nil, e
	}
	depth := 20
	if v := q.get("depth"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 200 {
			return 0, nil, errf(http.StatusBadRequest, "VALIDATION_ERROR", "depth must be 1 to 200")
		}
		depth = n
	}
	b, err := s.eng.Orderbook(m.Symbol, depth)
	if err != nil {
		return 0, nil, errf(http.StatusInternalServerError, "INTERNAL_ERROR", "%v", err)
	}
	lv := func(ls []paper.Level) [][2]string {
		out := make([][2]string, len(ls))
		for i, l := range ls {
			out[i] = [2]string{l.Price.String(), l.Size.String()}
		}
		return out
	}
	return ok(map[string]any{"market": m.Symbol, "seq_no": q.now.UnixMilli(), "last_updated_at": q.now.UnixMilli(),
		"bids": lv(b.Bids), "asks": lv(b.Asks)})
}

// https://docs.paradex.trade/api/prod/markets/klines: resolution 1, 3, 5, 15, 30 or 60 minutes; rows
// [ts ms, open, high, low, close, volume] as JSON numbers, oldest first,
// within start_at..end_at (ms).
func (s *Server) klines(q *req) (int, any, *apiErr) {
	m, e := s.market(q.get("symbol"))
	if e != nil {
		return 0, nil, e
	}
	res, err := strconv.Atoi(q.get("resolution"))
	if err != nil || !map[int]bool{1: true, 3: true, 5: true, 15: true, 30: true, 60: true}[res] {
		return 0, nil, errf(http.StatusBadRequest, "VALIDATION_ERROR", "resolution must be one of 1, 3, 5, 15, 30, 60")
	}
	start, err1 := strconv.ParseInt(q.get("start_at"), 10, 64)
	end, err2 := strconv.ParseInt(q.get("end_at"), 10, 64)
	if err1 != nil || err2 != nil || end < start {
		return 0, nil, errf(http.StatusBadRequest, "VALIDATION_ERROR", "start_at and end_at (ms) are required")
	}
	step := int64(res) * 60_000
	n := int((q.now.UnixMilli()-start)/step) + 2
	cs, err := s.eng.Candles(m.Symbol, res, min(max(n, 1), 1500))
	if err != nil {
		return 0, nil, errf(http.StatusBadRequest, "VALIDATION_ERROR", "%v", err)
	}
	rows := [][]json.Number{}
	num := func(d decimal.Decimal) json.Number { return json.Number(d.String()) }
	for _, c := range cs {
		t := c.Time.UnixMilli()
		if t < start || t > end {
			continue
		}
		rows = append(rows, []json.Number{json.Number(strconv.FormatInt(t, 10)), num(c.Open), num(c.High), num(c.Low), num(c.Close), num(c.Volume)})
	}
	return ok(map[string]any{"results": rows})
}

// https://docs.paradex.trade/api/prod/authentication/auth (POST /v1/auth, /v1/auth/{public_key}): the signature
// covers Request{POST, /v1/auth, "", timestamp, expiration} in seconds;
// answers {"jwt_token"}.
func (s *Server) auth(q *req) (int, any, *apiErr) {
	h := q.r.Header
	addr, err := stark.ParseFelt(h.Get("PARADEX-STARKNET-ACCOUNT"))
	if err != nil {
		return 0, nil, errf(http.StatusBadRequest, "INVALID_STARKNET_ADDRESS", "invalid PARADEX-STARKNET-ACCOUNT")
	}
	pub, known := s.Secret(stark.HexFelt(addr))
	if !known {
		return 0, nil, errf(http.StatusBadRequest, "NOT_ONBOARDED", "account %s is not onboarded", stark.HexFelt(addr))
	}
	if p := q.r.PathValue("publicKey"); p != "" {
		v, err := stark.ParseFelt(p)
		if err != nil || v.Cmp(pub) != 0 {
			return 0, nil, errf(http.StatusBadRequest, "INVALID_SUBKEY", "public key %s does not sign for account %s", p, stark.HexFelt(addr))
		}
	}
	ts, err1 := strconv.ParseInt(h.Get("PARADEX-TIMESTAMP"), 10, 64)
	exp, err2 := strconv.ParseInt(h.Get("PARADEX-SIGNATURE-EXPIRATION"), 10, 64)
	now := q.now.Unix()
	switch {
	case err1 != nil || err2 != nil:
		return 0, nil, errf(http.StatusBadRequest, "INVALID_TIMESTAMP", "PARADEX-TIMESTAMP and PARADEX-SIGNATURE-EXPIRATION must be Unix seconds")
	case ts > now+60 || exp <= now || exp-ts > 7*24*3600:
		return 0, nil, errf(http.StatusBadRequest, "INVALID_TIMESTAMP", "signature timestamp %d / expiration %d not valid at %d", ts, exp, now)
	}
	r, sv, err := stark.ParseSignature(h.Get("PARADEX-STARKNET-SIGNATURE"))
	if err != nil || !stark.Verify(pub, stark.AuthHash(s.cfg.ChainID, addr, ts, exp), r, sv) {
		return 0, nil, errf(http.StatusUnauthorized, "STARKNET_SIGNATURE_VERIFICATION_FAILED", "starknet signature verification failed")
	}
	return ok(map[string]string{"jwt_token": s.jwt(stark.HexFelt(addr), q.now)})
}

// https://docs.paradex.trade/api/prod/account/get-account (AccountSummaryResponse).
func (s *Server) account(q *req) (int, any, *apiErr) {
	b, err := s.eng.Balance(q.account)
	if err != nil {
		return 0, nil, errf(http.StatusInternalServerError, "INTERNAL_ERROR", "%v", err)
	}
	return ok(accountRow(q.account, b, q.now))
}

// accountRow is AccountSummaryResponse (REST and the account channel).
func accountRow(account string, b paper.Balance, now time.Time) map[string]any {
	im := b.PositionMargin.Add(b.OrderMargin)
	return map[string]any{"account": account, "account_value": b.Equity.String(), "free_collateral": b.FreeCollateral.String(),
		"total_collateral": b.Wallet.String(), "initial_margin_requirement": im.String(), "maintenance_margin_requirement": im.Div(decimal.NewFromInt(2)).String(),
		"margin_cushion": b.Equity.Sub(im.Div(decimal.NewFromInt(2))).String(), "status": "ACTIVE", "settlement_asset": "USDC",
		"updated_at": now.UnixMilli(), "seq_no": now.UnixNano(), "last_seen_notification": 0}
}

// https://docs.paradex.trade/api/prod/balance/get-balances: token balances (USDC collateral).
func (s *Server) balance(q *req) (int, any, *apiErr) {
	b, err := s.eng.Balance(q.account)
	if err != nil {
		return 0, nil, errf(http.StatusInternalServerError, "INTERNAL_ERROR", "%v", err)
	}
	return ok(results([]map[string]any{{"token": "USDC", "size": b.Wallet.String(), "last_updated_at": q.now.UnixMilli()}}))
}

// https://docs.paradex.trade/api/prod/positions/list-open-positions: size is signed (negative short).
func (s *Server) positions(q *req) (int, any, *apiErr) {
	var rows []map[string]any
	for _, sym := range s.eng.MarketSymbols() {
		ps, _ := s.eng.Positions(q.account, sym)
		for _, p := range ps {
			rows = append(rows, s.positionRow(q.account, p, q.now))
		}
	}
	return ok(results(rows))
}

// positionRow is PositionResp (REST and the positions channel): size
// signed; a closed position (paper side FLAT) is status CLOSED, size 0.
func (s *Server) positionRow(account string, p paper.Position, now time.Time) map[string]any {
	size, side, status := p.Size, string(p.Side), "OPEN"
	switch p.Side {
	case paper.Short:
		size = size.Neg()
	case paper.Flat:
		side, status = "LONG", "CLOSED"
	}
	row := map[string]any{"id": account + "-" + p.Market, "account": account, "market": p.Market,
		"side": side, "size": size.String(), "average_entry_price": p.EntryPrice.String(),
		"average_entry_price_usd": p.EntryPrice.String(), "unrealized_pnl": p.UnrealizedPnL.String(),
		"unrealized_funding_pnl": "0", "cost": p.EntryPrice.Mul(size).String(), "leverage": strconv.Itoa(p.Leverage),
		"liquidation_price": "", "status": status, "created_at": now.UnixMilli(), "last_updated_at": now.UnixMilli(),
		"seq_no": now.UnixNano()}
	if s.cfg.NoPositionLeverage {
		delete(row, "leverage")
	}
	return row
}

// https://docs.paradex.trade/api/prod/fills/list-fills: newest first, page_size at most 5000 (default 100).
func (s *Server) fills(q *req) (int, any, *apiErr) {
	size := 100
	if v := q.get("page_size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 5000 {
			return 0, nil, errf(http.StatusBadRequest, "VALIDATION_ERROR", "page_size must be 1 to 5000")
		}
		size = n
	}
	market := q.get("market")
	if market != "" {
		if _, e := s.market(market); e != nil {
			return 0, nil, e
		}
	}
	fs, _ := s.eng.Fills(q.account, market, 10000)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Time.After(fs[j].Time) })
	var rows []map[string]any
	s.mu.Lock()
	for _, f := range fs {
		if len(rows) == size {
			break
		}
		rows = append(rows, s.fillRow(q.account, f))
	}
	s.mu.Unlock()
	return ok(results(rows))
}

// fillRow is FillResult (REST and the fills channel); s.mu is held.
func (s *Server) fillRow(account string, f paper.Fill) map[string]any {
	return map[string]any{"id": "f" + f.ID, "order_id": s.byPaper[account+" "+f.OrderID], "client_id": f.ClientOrderID,
		"market": f.Market, "side": string(f.Side), "size": f.Size.String(), "price": f.Price.String(), "fee": f.Fee.String(),
		"fee_currency": "USDC", "liquidity": string(f.Liquidity), "fill_type": "FILL", "created_at": f.Time.UnixMilli(),
		"realized_pnl": f.RealizedPnL.String(), "remaining_size": "0", "account": account, "realized_funding": "0",
		"flags": []string{}}
}

// setMargin: https://docs.paradex.trade/api/prod/account/update-account-margin: leverage for a market,
// margin_type CROSS.
func (s *Server) setMargin(q *req) (int, any, *apiErr) {
	m, e := s.market(q.r.PathValue("market"))
	if e != nil {
		return 0, nil, e
	}
	var b struct {
		Leverage   int    `json:"leverage"`
		MarginType string `json:"margin_type"`
	}
	if err := json.Unmarshal(q.body, &b); err != nil || b.Leverage < 1 {
		return 0, nil, errf(http.StatusBadRequest, "BINDING_ERROR", "body must be {\"leverage\":N,\"margin_type\":\"CROSS\"}")
	}
	if b.MarginType != "CROSS" && b.MarginType != "ISOLATED" {
		return 0, nil, errf(http.StatusBadRequest, "VALIDATION_ERROR", "margin_type must be CROSS or ISOLATED")
	}
	if b.Leverage > s.spec(m.Symbol).MaxLeverage {
		return 0, nil, errf(http.StatusBadRequest, "INVALID_REQUEST_PARAMETER", "leverage %d above the market's %d", b.Leverage, s.spec(m.Symbol).MaxLeverage)
	}
	if _, err := s.eng.SetLeverage(q.account, m.Symbol, b.Leverage); err != nil {
		if errors.Is(err, paper.ErrInsufficientMargin) {
			return 0, nil, errf(http.StatusBadRequest, "NOT_ENOUGH_MARGIN", "not enough margin for leverage %d", b.Leverage)
		}
		return 0, nil, errf(http.StatusBadRequest, "INVALID_REQUEST_PARAMETER", "%v", err)
	}
	return ok(map[string]any{"account": q.account, "leverage": b.Leverage, "margin_type": b.MarginType, "market": m.Symbol})
}

// https://docs.paradex.trade/api/prod/account/get-account-margin-configs
func (s *Server) getMargin(q *req) (int, any, *apiErr) {
	var cfgs []map[string]any
	for _, sym := range s.eng.MarketSymbols() {
		if want := q.get("market"); want != "" && want != sym {
			continue
		}
		lev, _ := s.eng.Leverage(q.account, sym)
		cfgs = append(cfgs, map[string]any{"market": sym, "leverage": lev, "margin_type": "CROSS"})
	}
	return ok(map[string]any{"account": q.account, "configs": cfgs, "margin_methodology": "cross_margin"})
}
