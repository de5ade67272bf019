package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/paper"
	hl "github.com/perpgate/perpgate/services/connectors/hyperliquid"
	"github.com/shopspring/decimal"
)

type infoRequest struct {
	Type      string          `json:"type"`
	User      string          `json:"user"`
	Coin      string          `json:"coin"`
	Oid       json.RawMessage `json:"oid"`
	StartTime int64           `json:"startTime"`
	EndTime   *int64          `json:"endTime"`
	Req       *struct {
		Coin      string `json:"coin"`
		Interval  string `json:"interval"`
		StartTime int64  `json:"startTime"`
		EndTime   int64  `json:"endTime"`
	} `json:"req"`
}

var intervalMinutes = map[string]int{"1m": 1, "3m": 3, "5m": 5, "15m": 15, "30m": 30, "1h": 60, "2h": 120,
	"4h": 240, "8h": 480, "12h": 720, "1d": 1440, "3d": 4320, "1w": 10080}

func (s *Sim) serveInfo(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req infoRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		deserializeError(w, "body")
		return
	}
	user := strings.ToLower(req.User)
	s.mu.Lock()
	s.infoTypes[req.Type]++
	s.mu.Unlock()
	switch req.Type {
	case "meta":
		writeJSON(w, s.meta())
	case "metaAndAssetCtxs":
		writeJSON(w, []any{s.meta(), s.ctxs()})
	case "allMids":
		mids := map[string]string{}
		for _, a := range s.assets {
			if m, ok := s.mid(a.Name); ok {
				mids[a.Name] = num(m)
			}
		}
		writeJSON(w, mids)
	case "l2Book":
		writeJSON(w, s.book(req.Coin))
	case "candleSnapshot":
		if req.Req == nil {
			deserializeError(w, "req")
			return
		}
		writeJSON(w, s.candles(req.Req.Coin, req.Req.Interval, req.Req.StartTime, req.Req.EndTime))
	case "clearinghouseState":
		writeJSON(w, s.clearinghouse(user))
	case "activeAssetData":
		lev, err := s.eng.Leverage(user, req.Coin)
		if err != nil {
			deserializeError(w, "coin")
			return
		}
		m, _ := s.mid(req.Coin)
		writeJSON(w, map[string]any{"user": req.User, "coin": req.Coin, "leverage": hl.Leverage{Type: "cross", Value: lev},
			"maxTradeSzs": []string{"0", "0"}, "availableToTrade": []string{"0", "0"}, "markPx": num(m)})
	case "frontendOpenOrders", "openOrders":
		os, _ := s.eng.OpenOrders(user, "")
		out := make([]hl.FrontendOrder, 0, len(os))
		for _, o := range os {
			out = append(out, s.frontend(o))
		}
		writeJSON(w, out)
	case "userFills", "userFillsByTime":
		writeJSON(w, s.fills(user, req.Type == "userFillsByTime", req.StartTime, req.EndTime))
	case "userFunding":
		writeJSON(w, s.userFunding(user, req.StartTime, req.EndTime))
	case "userFees":
		f := s.eng.Fees()
		writeJSON(w, map[string]any{
			"userCrossRate": num(f.TakerBps.Div(decimal.NewFromInt(10000))),
			"userAddRate":   num(f.MakerBps.Div(decimal.NewFromInt(10000))),
			"dailyUserVlm":  []any{},
			"feeSchedule":   map[string]any{"cross": num(f.TakerBps.Div(decimal.NewFromInt(10000))), "add": num(f.MakerBps.Div(decimal.NewFromInt(10000)))},
		})
	case "orderStatus":
		writeJSON(w, s.orderStatus(user, req.Oid))
	case "userRole":
		writeJSON(w, s.role(user))
	case "userRateLimit":
		s.mu.Lock()
		used := 0
		if b := s.budgets[user+"/actions"]; b != nil {
			used = b.used
		}
		s.mu.Unlock()
		writeJSON(w, map[string]any{"cumVlm": "0", "nRequestsUsed": used, "nRequestsCap": s.reqCap})
	default:
		deserializeError(w, "unknown variant `"+req.Type+"`")
	}
}

func (s *Sim) meta() hl.Meta {
	u := make([]hl.AssetMeta, len(s.assets))
	for i, a := range s.assets {
		u[i] = hl.AssetMeta{Name: a.Name, SzDecimals: a.SzDecimals, MaxLeverage: a.MaxLeverage}
	}
	return hl.Meta{Universe: u}
}

func (s *Sim) mid(coin string) (decimal.Decimal, bool) {
	b, err := s.eng.Orderbook(coin, 1)
	if err != nil || len(b.Bids) == 0 || len(b.Asks) == 0 {
		return decimal.Zero, false
	}
	return b.Bids[0].Price.Add(b.Asks[0].Price).Div(decimal.NewFromInt(2)), true
}

func (s *Sim) ctxs() []hl.AssetCtx {
	out := make([]hl.AssetCtx, len(s.assets))
	for i, a := range s.assets {
		info, err := s.eng.Market(a.Name)
		if err != nil {
			continue
		}
		f, _ := s.eng.Funding(a.Name)
		mid, _ := s.mid(a.Name)
		m, zero := num(mid), "0"
		out[i] = hl.AssetCtx{Funding: num(f.Rate), OpenInterest: num(info.OpenInterest), PrevDayPx: num(info.MarkPrice),
			DayNtlVlm: "0", Premium: &zero, OraclePx: num(info.IndexPrice), MarkPx: num(info.MarkPrice), MidPx: &m,
			ImpactPxs: []string{m, m}, DayBaseVlm: "0"}
	}
	return out
}

func (s *Sim) book(coin string) *hl.L2Book {
	b, err := s.eng.Orderbook(coin, 20)
	if err != nil {
		return nil // the venue answers null for an unknown coin
	}
	side := func(ls []paper.Level) []hl.L2Level {
		out := make([]hl.L2Level, len(ls))
		for i, l := range ls {
			out[i] = hl.L2Level{Px: num(l.Price), Sz: num(l.Size), N: 1}
		}
		return out
	}
	return &hl.L2Book{Coin: coin, Time: connector.Int(b.Time.UnixMilli()), Levels: [2][]hl.L2Level{side(b.Bids), side(b.Asks)}}
}

func (s *Sim) candles(coin, interval string, start, end int64) []hl.CandleWire {
	mins, ok := intervalMinutes[interval]
	if !ok || end <= start {
		return []hl.CandleWire{}
	}
	n := int((end - start) / (int64(mins) * 60_000))
	cs, err := s.eng.Candles(coin, mins, min(max(n, 1), 1500))
	if err != nil {
		return []hl.CandleWire{}
	}
	out := make([]hl.CandleWire, 0, len(cs))
	for _, c := range cs {
		t := c.Time.UnixMilli()
		out = append(out, hl.CandleWire{T: t, TC: t + int64(mins)*60_000 - 1, S: coin, I: interval,
			O: num(c.Open), C: num(c.Close), H: num(c.High), L: num(c.Low), V: num(c.Volume)})
	}
	return out
}

func (s *Sim) clearinghouse(user string) hl.ClearinghouseState {
	st := hl.ClearinghouseState{AssetPositions: []hl.AssetPosition{}, Time: connector.Int(s.now().UnixMilli()), Withdrawable: "0",
		MarginSummary: hl.MarginSummary{AccountValue: "0", TotalNtlPos: "0", TotalRawUsd: "0", TotalMarginUsed: "0"}}
	b, err := s.eng.Balance(user)
	if err != nil {
		st.CrossMarginSummary = st.MarginSummary
		return st
	}
	ps, _ := s.eng.Positions(user, "")
	ntl := decimal.Zero
	for _, p := range ps {
		szi := p.Size
		if p.Side == paper.Short {
			szi = szi.Neg()
		}
		roe := decimal.Zero
		if p.Margin.IsPositive() {
			roe = p.UnrealizedPnL.DivRound(p.Margin, 8)
		}
		ntl = ntl.Add(p.Notional)
		_, as, _ := s.assetByName(p.Market)
		st.AssetPositions = append(st.AssetPositions, hl.AssetPosition{Type: "oneWay", Position: hl.PositionWire{
			Coin: p.Market, Szi: num(szi), EntryPx: num(p.EntryPrice), PositionValue: num(p.Notional),
			UnrealizedPnl: num(p.UnrealizedPnL), ReturnOnEquity: num(roe), MarginUsed: num(p.Margin),
			Leverage: hl.Leverage{Type: "cross", Value: p.Leverage}, MaxLeverage: as.MaxLeverage}})
	}
	st.MarginSummary = hl.MarginSummary{AccountValue: num(b.Equity), TotalNtlPos: num(ntl), TotalRawUsd: num(b.Wallet),
		TotalMarginUsed: num(b.PositionMargin)}
	st.CrossMarginSummary = st.MarginSummary
	st.Withdrawable = num(decimal.Max(b.FreeCollateral, decimal.Zero))
	return st
}

var frontendTypes = map[paper.OrderType]string{paper.Limit: "Limit", paper.Market: "Market",
	paper.StopMarket: "Stop Market", paper.TakeProfitMarket: "Take Profit Market"}

func (s *Sim) frontend(o paper.Order) hl.FrontendOrder {
	s.mu.Lock()
	ex := s.extra[o.ID]
	s.mu.Unlock()
	oid, _ := strconv.ParseUint(o.ID, 10, 64)
	side := "A"
	if o.Side == paper.Buy {
		side = "B"
	}
	f := hl.FrontendOrder{Coin: o.Market, Side: side, LimitPx: ex.limitPx, Sz: num(o.Size.Sub(o.FilledSize)), Oid: connector.Int(oid),
		Timestamp: connector.Int(o.CreatedAt.UnixMilli()), OrigSz: num(o.Size), OrderType: frontendTypes[o.Type],
		IsTrigger: o.Type != paper.Limit && o.Type != paper.Market, TriggerPx: "0", TriggerCondition: "N/A",
		IsPositionTpsl: ex.positionTpsl, ReduceOnly: o.ReduceOnly, Children: []any{}}
	if f.LimitPx == "" {
		f.LimitPx = num(o.Price)
	}
	if f.IsTrigger {
		f.TriggerPx = num(o.TriggerPrice)
		below := (o.Type == paper.StopMarket) == (o.Side == paper.Sell)
		if below {
			f.TriggerCondition = "Price below " + f.TriggerPx
		} else {
			f.TriggerCondition = "Price above " + f.TriggerPx
		}
	} else if ex.tif != "" {
		tif := ex.tif
		f.Tif = &tif
	}
	if ex.cloid != "" {
		c := ex.cloid
		f.Cloid = &c
	}
	return f
}

func (s *Sim) fills(user string, byTime bool, start int64, end *int64) []hl.UserFill {
	fs, err := s.eng.Fills(user, "", 2000)
	out := []hl.UserFill{}
	if err != nil {
		return out
	}
	for _, f := range fs {
		t := f.Time.UnixMilli()
		if byTime && (t < start || (end != nil && t > *end)) {
			continue
		}
		out = append(out, s.userFill(f))
	}
	return out
}

// userFill is one fill as userFills (info and websocket) answers it.
func (s *Sim) userFill(f paper.Fill) hl.UserFill {
	side, dir := "A", "Close Long"
	if f.Side == paper.Buy {
		side, dir = "B", "Open Long"
	}
	tid, _ := strconv.ParseUint(f.ID, 10, 64)
	oid, _ := strconv.ParseUint(f.OrderID, 10, 64)
	return hl.UserFill{Coin: f.Market, Px: num(f.Price), Sz: num(f.Size), Side: side, Time: connector.Int(f.Time.UnixMilli()),
		StartPosition: "0", Dir: dir, ClosedPnl: num(f.RealizedPnL), Hash: "0x" + strings.Repeat("0", 64),
		Oid: connector.Int(oid), Crossed: f.Liquidity == paper.Taker, Fee: num(f.Fee), Tid: connector.Int(tid), FeeToken: "USDC"}
}

var orderStates = map[paper.OrderStatus]string{paper.Open: "open", paper.Pending: "open", paper.Filled: "filled",
	paper.Cancelled: "canceled", paper.Rejected: "rejected"}

func (s *Sim) orderStatus(user string, ref json.RawMessage) any {
	unknown := map[string]any{"status": "unknownOid"}
	id := ""
	var cloid string
	if json.Unmarshal(ref, &cloid) == nil {
		s.mu.Lock()
		id = s.cloids[user][strings.ToLower(cloid)]
		s.mu.Unlock()
	} else {
		var n uint64
		if json.Unmarshal(ref, &n) != nil {
			return unknown
		}
		id = strconv.FormatUint(n, 10)
	}
	o, err := s.eng.Order(user, id)
	if id == "" || err != nil {
		return unknown
	}
	return map[string]any{"status": "order", "order": map[string]any{
		"order": s.frontend(o), "status": orderStates[o.Status], "statusTimestamp": o.UpdatedAt.UnixMilli()}}
}

func (s *Sim) role(addr string) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, mainnet := range []bool{true, false} {
		if ag, ok := s.agents[agentKey(addr, mainnet)]; ok {
			return map[string]any{"role": "agent", "data": map[string]any{"user": ag.master}}
		}
	}
	if _, ok := s.vaults[addr]; ok {
		return map[string]any{"role": "vault"}
	}
	if s.users[addr] {
		return map[string]any{"role": "user"}
	}
	return map[string]any{"role": "missing"}
}
