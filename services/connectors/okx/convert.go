package okx

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// quote is the only settlement the connector lists: USDT-margined swaps.
const quote = "USDT"

// instMeta is what the adapter keeps about an instrument beyond
// connector.Market: the contract size and OKX's own lot rules, in
// contracts (fact sheet §0 #1, §4).
type instMeta struct {
	ctVal    decimal.Decimal // base units per contract
	lotSz    decimal.Decimal // contracts
	minSz    decimal.Decimal // contracts
	maxMktSz decimal.Decimal // contracts, zero when unknown
	family   string          // instFamily / uly, e.g. BTC-USDT: the index name
	groupID  string          // fee group
}

// marketsFromInstruments turns the SWAP instruments into the tradable
// linear USDT swaps with sizes in base units: LotSize = lotSz × ctVal,
// MinSize = minSz × ctVal.
func marketsFromInstruments(insts []instrument) ([]connector.Market, map[string]instMeta) {
	var out []connector.Market
	meta := map[string]instMeta{}
	for _, in := range insts {
		if in.InstType != "SWAP" || in.State != "live" || in.SettleCcy != quote || !strings.HasSuffix(in.InstID, "-USDT-SWAP") ||
			(in.CtType != "" && in.CtType != "linear") {
			continue
		}
		m, ok := venuekit.NewMarket(in.InstID, quote)
		if !ok || !in.CtVal.IsPositive() || !in.LotSz.IsPositive() || !in.TickSz.IsPositive() {
			continue
		}
		m.TickSize, m.LotSize, m.MinSize = in.TickSz.Decimal, in.LotSz.Mul(in.CtVal.Decimal), in.MinSz.Mul(in.CtVal.Decimal)
		m.MaxLeverage, _ = strconv.Atoi(in.Lever)
		out = append(out, m)
		family := in.InstFamily
		if family == "" {
			family = in.Uly
		}
		meta[in.InstID] = instMeta{ctVal: in.CtVal.Decimal, lotSz: in.LotSz.Decimal, minSz: in.MinSz.Decimal,
			maxMktSz: in.MaxMktSz.Decimal, family: family, groupID: in.GroupID}
	}
	return out, meta
}

// contracts converts a base-unit size to whole lots of contracts, rounded
// down (DESIGN §7); the runtime already rounded to LotSize, so this only
// floors what LotSize's decimal form could not express.
func (im instMeta) contracts(size decimal.Decimal) decimal.Decimal {
	c := size.DivRound(im.ctVal, 16)
	if im.lotSz.IsPositive() {
		c = c.Sub(c.Mod(im.lotSz))
	}
	return c
}

// base converts contracts to base units.
func (im instMeta) base(contracts decimal.Decimal) decimal.Decimal { return contracts.Mul(im.ctVal) }

// statusFromWire maps a regular order's state (fact sheet §6). A partly
// filled order still rests, so it is OPEN; filledSize shows the progress.
// A post-only order OKX cancelled because it would have taken liquidity
// (cancelSource 31) was never on the book: REJECTED.
//
// Any other cancel with nothing filled that the owner did not ask for
// (cancelSource other than 1, documented or new:
// https://www.okx.com/docs-v5/en/#order-book-trading-trade-get-order-details)
// is a refusal too: REJECTED.
func statusFromWire(state, cancelSource string, filled bool) string {
	switch state {
	case "live", "partially_filled":
		return contract.StatusOpen
	case "filled":
		return contract.StatusFilled
	case "canceled", "mmp_canceled":
		if cancelSource == cancelPostOnly || (!filled && cancelSource != cancelByUser) {
			return contract.StatusRejected
		}
		return contract.StatusCancelled
	}
	return state
}

// cancelByUser is the cancelSource of the owner's own cancel.
const cancelByUser = "1"

// cancelPostOnly is the cancelSource of a post-only order that would have
// taken liquidity (fact sheet §3).
const cancelPostOnly = "31"

// algoStatusFromWire maps an algo order's state.
func algoStatusFromWire(state string) string {
	switch state {
	case "live", "pause":
		return contract.StatusPending
	case "effective", "partially_effective":
		return contract.StatusFilled
	case "canceled":
		return contract.StatusCancelled
	case "order_failed":
		return contract.StatusRejected
	}
	return state
}

// algoPrefix marks order ids of algo orders, whose algoId space is
// separate from ordId and which cancel on their own endpoint.
const algoPrefix = "algo-"

// parseOrderID reads an id the connector handed out: digits for a regular
// order, algo-<digits> for a stop or protection order.
func parseOrderID(id string) (string, bool, error) {
	digits, algo := strings.CutPrefix(id, algoPrefix)
	if _, err := strconv.ParseUint(digits, 10, 64); err != nil || digits == "" {
		return "", false, contract.Errorf(contract.CodeInvalidRequest,
			"field \"orderId\": %q is not an OKX order id (digits, or algo-<digits> for stop and protection orders)", id)
	}
	return digits, algo, nil
}

func sideFromWire(s string) contract.Side { return contract.Side(strings.ToUpper(s)) }

func sideToWire(s contract.Side) string { return strings.ToLower(string(s)) }

func orderFromWire(o order, im instMeta) contract.Order {
	return contract.Order{
		ID:            o.OrdID,
		Market:        o.InstID,
		Side:          sideFromWire(o.Side),
		Type:          orderTypeFromWire(o.OrdType),
		Size:          im.base(o.Sz.Decimal),
		Price:         o.Px.Decimal,
		FilledSize:    im.base(o.AccFillSz.Decimal),
		Status:        statusFromWire(o.State, o.CancelSource, o.AccFillSz.IsPositive()),
		CreatedAt:     int64(o.CTime) / 1000,
		ReduceOnly:    bool(o.ReduceOnly),
		ClientOrderID: o.ClOrdID,
	}
}

func orderTypeFromWire(t string) string {
	switch t {
	case "limit", "post_only":
		return string(connector.Limit)
	case "market", "optimal_limit_ioc":
		return string(connector.MarketType)
	}
	return strings.ToUpper(t)
}

func algoFromWire(a algoOrder, im instMeta) contract.Order {
	trigger := a.TriggerPx.Decimal
	typ := string(connector.Stop)
	switch {
	case a.OrdType == "oco":
		typ, trigger = "TP_SL", a.SlTriggerPx.Decimal
	case a.SlTriggerPx.IsPositive():
		trigger = a.SlTriggerPx.Decimal
	case a.TpTriggerPx.IsPositive():
		typ, trigger = "TAKE_PROFIT_MARKET", a.TpTriggerPx.Decimal
	}
	return contract.Order{
		ID:            algoPrefix + a.AlgoID,
		Market:        a.InstID,
		Side:          sideFromWire(a.Side),
		Type:          typ,
		Size:          im.base(a.Sz.Decimal),
		Price:         trigger,
		FilledSize:    decimal.Zero,
		Status:        algoStatusFromWire(a.State),
		CreatedAt:     int64(a.CTime) / 1000,
		TriggerPrice:  &trigger,
		ReduceOnly:    bool(a.ReduceOnly),
		ClientOrderID: a.AlgoClOrdID,
	}
}

// positionFromWire reads a position: in net mode the sign of pos is the
// side; in long/short mode posSide is.
func positionFromWire(p position, im instMeta) contract.Position {
	side := contract.Long
	if p.PosSide == "short" || (p.PosSide != "long" && p.Pos.IsNegative()) {
		side = contract.Short
	}
	return contract.Position{
		Market:        p.InstID,
		Side:          side,
		Size:          im.base(p.Pos.Abs()),
		EntryPrice:    p.AvgPx.Decimal,
		MarkPrice:     p.MarkPx.Decimal,
		UnrealizedPnl: p.Upl.Decimal,
		Leverage:      p.Lever.Decimal,
	}
}

// fillFromWire reads a fill. OKX's fee is negative when paid (fact sheet
// §0 #5); the contract's fee is the cost, so the sign flips.
func fillFromWire(f fill, im instMeta) contract.Fill {
	t := f.FillTime
	if t == 0 {
		t = f.TS
	}
	out := contract.Fill{
		ID:        string(f.TradeID),
		OrderID:   string(f.OrdID),
		Market:    f.InstID,
		Side:      sideFromWire(f.Side),
		Size:      im.base(f.FillSz.Decimal),
		Price:     f.FillPx.Decimal,
		Fee:       f.Fee.Neg(),
		Timestamp: int64(t) / 1000,
	}
	out.RealizedPnl = venuekit.Given(f.FillPnl)
	return out
}

// candlesFromWire reads candle rows, oldest first: OKX answers newest
// first. Volume is volCcy, in base units for swaps (vol is contracts).
func candlesFromWire(rows []candle) []contract.Candle {
	out := make([]contract.Candle, 0, len(rows))
	for _, r := range rows {
		if len(r) < 7 {
			continue
		}
		t, err := strconv.ParseInt(r[0], 10, 64)
		if err != nil {
			continue
		}
		var v [5]decimal.Decimal
		ok := true
		for i, s := range []string{r[1], r[2], r[3], r[4], r[6]} {
			if v[i], err = decimal.NewFromString(s); err != nil {
				ok = false
			}
		}
		if ok {
			out = append(out, contract.Candle{Time: t / 1000, Open: v[0], High: v[1], Low: v[2], Close: v[3], Volume: v[4]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}

// bars maps candle minutes to OKX's bar; days are UTC-aligned with 1Dutc
// (1D is aligned to UTC+8: fact sheet §0 #8).
var bars = map[int]string{1: "1m", 5: "5m", 15: "15m", 60: "1H", 240: "4H", 1440: "1Dutc"}

// levels reads book rows [price, contracts, "0", orders] into base units.
func levels(rows [][]string, im instMeta, n int) []contract.Level {
	out := make([]contract.Level, 0, min(len(rows), n))
	for _, r := range rows {
		if len(out) == n || len(r) < 2 {
			break
		}
		px, err1 := decimal.NewFromString(r[0])
		sz, err2 := decimal.NewFromString(r[1])
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, contract.Level{px, im.base(sz)})
	}
	return out
}

// okxIDPattern is OKX's rule for clOrdId and algoClOrdId: 1 to 32 letters
// and digits (fact sheet §7).
var okxIDPattern = regexp.MustCompile(`^[A-Za-z0-9]{1,32}$`)

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// clOrdID derives the OKX client id of one of our clientOrderIds,
// deterministically, so a look-up by our id finds the order (DESIGN §6):
// an id OKX takes is sent as it is; a UUID (what the gateway assigns)
// loses its dashes, which leaves 32 hex digits; any other id becomes "x"
// and 31 hex digits of its SHA-256. Different ids never share a client id
// unless a client uses a dashless UUID and the same UUID with dashes.
func clOrdID(id string) string {
	switch {
	case okxIDPattern.MatchString(id):
		return id
	case uuidPattern.MatchString(id):
		return strings.ReplaceAll(id, "-", "")
	}
	sum := sha256.Sum256([]byte(id))
	return "x" + hex.EncodeToString(sum[:])[:31]
}

// fmtDec renders a decimal as OKX takes it: plain, no exponent.
func fmtDec(d decimal.Decimal) string { return d.String() }

// bps converts an OKX fee rate (negative = charged) to the contract's
// basis points (positive = charged).
func bps(rate decimal.Decimal) decimal.Decimal { return rate.Mul(decimal.NewFromInt(-10000)) }
