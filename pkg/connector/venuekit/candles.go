package venuekit

import (
	"encoding/json"
	"sort"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

// CandleRow reads a kline row [ts ms, open, high, low, close, volume],
// JSON numbers read as decimals (never floats).
func CandleRow(r []json.Number) (contract.Candle, bool) {
	if len(r) < 6 {
		return contract.Candle{}, false
	}
	ms, err := r[0].Int64()
	if err != nil {
		return contract.Candle{}, false
	}
	var v [5]decimal.Decimal
	for i := range v {
		if v[i], err = decimal.NewFromString(r[i+1].String()); err != nil {
			return contract.Candle{}, false
		}
	}
	return contract.Candle{Time: ms / 1000, Open: v[0], High: v[1], Low: v[2], Close: v[3], Volume: v[4]}, true
}

// Aggregate builds candles of minutes (a multiple of the rows' own) from
// shorter candles, on UTC boundaries, oldest first, the last limit; the
// last may be partial. It also sorts and trims candles already of that
// length (one row per bucket).
func Aggregate(rows []contract.Candle, minutes, limit int) []contract.Candle {
	sort.Slice(rows, func(i, j int) bool { return rows[i].Time < rows[j].Time })
	step := int64(minutes) * 60
	var out []contract.Candle
	for _, h := range rows {
		start := h.Time - ((h.Time%step)+step)%step
		if n := len(out); n > 0 && out[n-1].Time == start {
			c := &out[n-1]
			c.High = decimal.Max(c.High, h.High)
			c.Low = decimal.Min(c.Low, h.Low)
			c.Close = h.Close
			c.Volume = c.Volume.Add(h.Volume)
			continue
		}
		out = append(out, contract.Candle{Time: start, Open: h.Open, High: h.High, Low: h.Low, Close: h.Close, Volume: h.Volume})
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out
}
