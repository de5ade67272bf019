package sim

import (
	"slices"
	"strings"
	"time"
)

// fundingPage is the most entries one userFunding answer holds.
const fundingPage = 500

// userFunding serves the info request userFunding
// (https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/info-endpoint/perpetuals#retrieve-a-users-funding-history-or-non-funding-ledger-updates)
// from the funding payments the paper engine books: oldest first from
// startTime (ms, inclusive) to endTime (default now), at most 500 entries
// (page on with the last time as the next startTime). usdc is signed
// (negative when paid), szi the signed position, fundingRate the rate.
func (s *Sim) userFunding(user string, start int64, end *int64) []map[string]any {
	all, _ := s.eng.FundingPayments(user, "", time.UnixMilli(start), 1<<30)
	slices.Reverse(all)
	limit := fundingPage
	if s.pageCap > 0 {
		limit = s.pageCap
	}
	out := []map[string]any{}
	for _, p := range all {
		if (end != nil && p.Time.UnixMilli() > *end) || len(out) == limit {
			continue
		}
		out = append(out, map[string]any{
			"time": p.Time.UnixMilli(), "hash": "0x" + strings.Repeat("0", 64),
			"delta": map[string]any{"type": "funding", "coin": p.Market, "usdc": num(p.Amount), "szi": num(p.PositionSize),
				"fundingRate": num(p.Rate), "nSamples": nil},
		})
	}
	return out
}
