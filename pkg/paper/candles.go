package paper

import (
	"fmt"
	"math"
	"time"

	"github.com/shopspring/decimal"
)

// maxCandles bounds Candles' limit.
const maxCandles = 1500

var minuteVolumeNotional = decimal.NewFromInt(2_000_000)

// Candles returns up to limit bars of intervalMinutes (1..10080) ending with
// the current, still open bar, oldest first. Bars since the engine started
// are aggregated from the walk it actually took; older bars are synthesized
// backwards from the start price, deterministically from the seed. A limit
// <= 0 means 100; more than 1500, or a bad interval, is ErrInvalidRequest.
func (e *Engine) Candles(symbol string, intervalMinutes, limit int) ([]Candle, error) {
	now := e.lock()
	defer e.mu.Unlock()
	m, err := e.market(symbol)
	if err != nil {
		return nil, err
	}
	if intervalMinutes < 1 || intervalMinutes > 7*1440 {
		return nil, fmt.Errorf("candles interval %d: must be 1 to 10080 minutes: %w", intervalMinutes, ErrInvalidRequest)
	}
	if limit <= 0 {
		limit = 100
	}
	if limit > maxCandles {
		return nil, fmt.Errorf("candles limit %d: at most %d: %w", limit, maxCandles, ErrInvalidRequest)
	}
	ivs := int64(intervalMinutes) * 60
	cur := floorDiv(now.Unix(), ivs) * ivs
	first := cur - int64(limit-1)*ivs
	histStart := m.bars[0].minute * 60

	out := make([]Candle, 0, limit)
	// Synthetic bars: every bucket that ends before recorded history.
	nSynth := 0
	for s := first; s+ivs <= histStart && s <= cur; s += ivs {
		nSynth++
	}
	synth := make([]Candle, nSynth)
	closePx := m.firstOpen
	for k := nSynth - 1; k >= 0; k-- {
		s := first + int64(k)*ivs
		synth[k] = m.synthCandle(s, ivs, closePx)
		closePx = synth[k].Open
	}
	out = append(out, synth...)

	// Recorded bars, aggregated per bucket.
	bi := 0
	prevClose := m.firstOpen
	for s := first + int64(nSynth)*ivs; s <= cur; s += ivs {
		c := Candle{Time: time.Unix(s, 0).UTC()}
		have := false
		for bi < len(m.bars) && m.bars[bi].minute*60 < s {
			bi++
		}
		for bi < len(m.bars) && m.bars[bi].minute*60 < s+ivs {
			b := m.bars[bi]
			if !have {
				c.Open, c.High, c.Low = b.open, b.high, b.low
				have = true
			}
			c.High = decimal.Max(c.High, b.high)
			c.Low = decimal.Min(c.Low, b.low)
			c.Close = b.close
			c.Volume = c.Volume.Add(b.volume)
			bi++
		}
		if !have {
			c.Open, c.High, c.Low, c.Close = prevClose, prevClose, prevClose, prevClose
		}
		c.Volume = c.Volume.Add(m.synthVolume(s, ivs, c.Close))
		prevClose = c.Close
		out = append(out, c)
	}
	return out, nil
}

// synthCandle derives a bar starting at s that closes at closePx. The float
// only draws the relative move, which becomes a tick-quantized decimal at
// once.
func (m *market) synthCandle(s, ivs int64, closePx decimal.Decimal) Candle {
	sigma := 1e-4 * math.Sqrt(float64(ivs))
	u := func(tag uint64) float64 {
		return float64(hash(m.salt, tag, uint64(ivs), uint64(s))%2_000_001)/1_000_000 - 1
	}
	rel := func(x float64) decimal.Decimal { return decimal.New(int64(math.Round(x*1e6)), -6) }
	one := decimal.NewFromInt(1)
	tick := m.spec.TickSize

	open := nearestTo(closePx.Mul(one.Sub(rel(sigma*u(5)))), tick)
	if open.Sign() <= 0 {
		open = tick
	}
	hi := ceilTo(decimal.Max(open, closePx).Mul(one.Add(rel(sigma*(u(6)+1)/4))), tick)
	lo := floorTo(decimal.Min(open, closePx).Mul(one.Sub(rel(sigma*(u(7)+1)/4))), tick)
	if lo.Sign() <= 0 {
		lo = decimal.Min(open, closePx)
	}
	return Candle{
		Time:   time.Unix(s, 0).UTC(),
		Open:   open,
		High:   hi,
		Low:    lo,
		Close:  closePx,
		Volume: m.synthVolume(s, ivs, closePx),
	}
}

// synthVolume is 1M–3M quote units per minute of the bar, in base units.
func (m *market) synthVolume(s, ivs int64, px decimal.Decimal) decimal.Decimal {
	f := decimal.New(int64(50+hash(m.salt, 8, uint64(ivs), uint64(s))%100), -2)
	notional := minuteVolumeNotional.Mul(f).Mul(decimal.NewFromInt(ivs / 60))
	return floorTo(notional.Div(px), m.spec.LotSize)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
