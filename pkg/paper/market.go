package paper

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/shopspring/decimal"
)

// maxBookDepth is how many levels per side the synthesized book has; market
// orders larger than that much liquidity are rejected.
const maxBookDepth = 500

// maxBars bounds the recorded one-minute history per market (7 days).
const maxBars = 7 * 1440

var (
	levelNotional = decimal.NewFromInt(250000)
	baseFunding   = decimal.RequireFromString("0.0001")
	maxFunding    = decimal.RequireFromString("0.0075")
	baseOINotion  = decimal.NewFromInt(50_000_000)
)

type market struct {
	spec   MarketSpec
	salt   uint64
	rng    *rand.Rand
	pcg    *rand.PCG // rng's source, whose state a snapshot keeps
	mark   decimal.Decimal
	index  decimal.Decimal
	start  int64         // Unix second the engine started
	active *marketOrders // live orders of every account

	bars      []bar           // one-minute bars since start, oldest first
	firstOpen decimal.Decimal // open of the oldest recorded bar
}

type bar struct {
	minute                 int64 // Unix minute
	open, high, low, close decimal.Decimal
	volume                 decimal.Decimal
}

// step moves mark by a normal relative step of about 1 bp, quantized to the
// tick, and derives index from it.
func (m *market) step(t int64) {
	// The float only draws the step; it becomes a decimal at once.
	k := int64(math.Round(m.rng.NormFloat64() * 100))
	next := m.mark.Add(m.mark.Mul(decimal.New(k, -6)))
	next = nearestTo(next, m.spec.TickSize)
	if next.Sign() <= 0 {
		next = m.spec.TickSize
	}
	m.mark = next
	d := int64(hash(m.salt, 1, uint64(t))%5) - 2
	m.index = m.mark.Add(m.spec.TickSize.Mul(decimal.NewFromInt(d)))
	if m.index.Sign() <= 0 {
		m.index = m.mark
	}
	m.record(t, m.mark, decimal.Zero)
}

// record folds a price (and traded volume) into the minute bar of t.
func (m *market) record(t int64, p, volume decimal.Decimal) {
	minute := t / 60
	if n := len(m.bars); n > 0 && m.bars[n-1].minute == minute {
		b := &m.bars[n-1]
		b.high = decimal.Max(b.high, p)
		b.low = decimal.Min(b.low, p)
		b.close = p
		b.volume = b.volume.Add(volume)
		return
	}
	m.bars = append(m.bars, bar{minute: minute, open: p, high: p, low: p, close: p, volume: volume})
	if len(m.bars) > maxBars {
		m.bars = m.bars[len(m.bars)-maxBars:]
		m.firstOpen = m.bars[0].open
	}
}

func (m *market) bestBid() decimal.Decimal { return m.levelPrice(Sell, 0) }
func (m *market) bestAsk() decimal.Decimal { return m.levelPrice(Buy, 0) }

// levelPrice is the price of book level i on the side a taker of side
// `taker` trades against: asks for BUY, bids for SELL.
func (m *market) levelPrice(taker Side, i int) decimal.Decimal {
	off := m.spec.TickSize.Mul(decimal.NewFromInt(int64(i + 1)))
	if taker == Buy {
		return m.mark.Add(off)
	}
	return m.mark.Sub(off)
}

// levelSize is a deterministic size worth 125k–375k quote units, at least
// one lot.
func (m *market) levelSize(taker Side, i int, t int64) decimal.Decimal {
	sideTag := uint64(2)
	if taker == Sell {
		sideTag = 3
	}
	f := decimal.New(int64(50+hash(m.salt, sideTag, uint64(i), uint64(t))%100), -2)
	size := floorTo(levelNotional.Mul(f).Div(m.mark), m.spec.LotSize)
	if size.Sign() <= 0 {
		return m.spec.LotSize
	}
	return size
}

func (m *market) fundingRate() decimal.Decimal {
	premium := m.mark.Sub(m.index).DivRound(m.index, 8)
	r := baseFunding.Add(premium)
	if r.GreaterThan(maxFunding) {
		return maxFunding
	}
	if r.LessThan(maxFunding.Neg()) {
		return maxFunding.Neg()
	}
	return r
}

// Markets returns every listed market in configuration order.
func (e *Engine) Markets() []MarketInfo {
	now := e.lock()
	defer e.mu.Unlock()
	out := make([]MarketInfo, len(e.ordered))
	for i, m := range e.ordered {
		out[i] = e.marketInfo(m, now)
	}
	return out
}

// Market returns one market, or ErrUnknownMarket.
func (e *Engine) Market(symbol string) (MarketInfo, error) {
	now := e.lock()
	defer e.mu.Unlock()
	m, err := e.market(symbol)
	if err != nil {
		return MarketInfo{}, err
	}
	return e.marketInfo(m, now), nil
}

func (e *Engine) marketInfo(m *market, now time.Time) MarketInfo {
	return MarketInfo{
		Symbol:          m.spec.Symbol,
		Base:            m.spec.Base,
		Quote:           m.spec.Quote,
		TickSize:        m.spec.TickSize,
		LotSize:         m.spec.LotSize,
		MinNotional:     m.spec.MinNotional,
		MaxLeverage:     m.spec.MaxLeverage,
		MarkPrice:       m.mark,
		IndexPrice:      m.index,
		FundingRate:     m.fundingRate(),
		NextFundingTime: e.nextFunding(now),
		FundingInterval: e.cfg.FundingInterval,
		OpenInterest:    e.openInterest(m),
	}
}

// openInterest is a synthetic base worth 50M quote units at the start price
// plus the long size of paper accounts.
func (e *Engine) openInterest(m *market) decimal.Decimal {
	oi := floorTo(baseOINotion.Div(m.spec.StartPrice), m.spec.LotSize)
	for _, a := range e.accounts {
		if p := a.positions[m.spec.Symbol]; p != nil && p.size.Sign() > 0 {
			oi = oi.Add(p.size)
		}
	}
	return oi
}

func (e *Engine) nextFunding(now time.Time) time.Time {
	iv := int64(e.cfg.FundingInterval / time.Second)
	return time.Unix((now.Unix()/iv+1)*iv, 0).UTC()
}

// MarkPrice returns a market's mark and index price.
func (e *Engine) MarkPrice(symbol string) (Prices, error) {
	now := e.lock()
	defer e.mu.Unlock()
	m, err := e.market(symbol)
	if err != nil {
		return Prices{}, err
	}
	return Prices{Market: m.spec.Symbol, Mark: m.mark, Index: m.index, Time: now}, nil
}

// SetMarkPrice moves a market's mark (and index) to price rounded to the
// tick, then fills resting orders and fires triggers it crosses. The walk
// continues from there. A non-positive price is ErrInvalidRequest.
func (e *Engine) SetMarkPrice(symbol string, price decimal.Decimal) (res Prices, err error) {
	now := e.lock()
	defer unlockDurable(e, e.written, &res, &err)
	m, err := e.market(symbol)
	if err != nil {
		return Prices{}, err
	}
	p := nearestTo(price, m.spec.TickSize)
	if p.Sign() <= 0 {
		return Prices{}, fmt.Errorf("set mark price %s: price must be at least the tick %s: %w", price, m.spec.TickSize, ErrInvalidRequest)
	}
	if err := e.write(record{Op: opMark, Market: symbol, Price: price}); err != nil {
		return Prices{}, fmt.Errorf("set mark price: %w", err)
	}
	m.mark, m.index = p, p
	m.record(now.Unix(), p, decimal.Zero)
	e.checkOrders(m, now.Unix())
	e.notify()
	return Prices{Market: m.spec.Symbol, Mark: m.mark, Index: m.index, Time: now}, nil
}

// Orderbook returns depth levels per side of the synthesized book (20 when
// depth <= 0; at most 500, else ErrInvalidRequest).
func (e *Engine) Orderbook(symbol string, depth int) (Book, error) {
	now := e.lock()
	defer e.mu.Unlock()
	m, err := e.market(symbol)
	if err != nil {
		return Book{}, err
	}
	if depth <= 0 {
		depth = 20
	}
	if depth > maxBookDepth {
		return Book{}, fmt.Errorf("orderbook depth %d: at most %d levels: %w", depth, maxBookDepth, ErrInvalidRequest)
	}
	b := Book{Market: m.spec.Symbol, Time: now}
	for i := 0; i < depth; i++ {
		if bid := m.levelPrice(Sell, i); bid.Sign() > 0 {
			b.Bids = append(b.Bids, Level{Price: bid, Size: m.levelSize(Sell, i, now.Unix())})
		}
		b.Asks = append(b.Asks, Level{Price: m.levelPrice(Buy, i), Size: m.levelSize(Buy, i, now.Unix())})
	}
	return b, nil
}

// Funding returns a market's current funding rate and next funding time.
func (e *Engine) Funding(symbol string) (Funding, error) {
	now := e.lock()
	defer e.mu.Unlock()
	m, err := e.market(symbol)
	if err != nil {
		return Funding{}, err
	}
	return Funding{Market: m.spec.Symbol, Rate: m.fundingRate(), NextTime: e.nextFunding(now), Interval: e.cfg.FundingInterval}, nil
}

// applyFunding books one funding payment on every position of m.
func (e *Engine) applyFunding(m *market, t int64) {
	rate := m.fundingRate()
	for _, a := range e.sortedAccounts() {
		p := a.positions[m.spec.Symbol]
		if p == nil || p.size.IsZero() {
			continue
		}
		pay := p.size.Mul(m.mark).Mul(rate)
		a.wallet = a.wallet.Sub(pay)
		a.funding = a.funding.Add(pay)
		paid := FundingPayment{Market: m.spec.Symbol, Amount: pay.Neg(), Rate: rate, PositionSize: p.size, Time: time.Unix(t, 0).UTC()}
		a.recordFunding(paid)
		e.emitFunding(a, paid, t)
	}
}
