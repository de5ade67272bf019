package paper

import (
	"math"
	"slices"
)

// historyPage is the largest page of fills or funding payments a caller
// can ask for (getFills and getFundingPayments take at most 1000).
const historyPage = 1000

// perMarket keeps an account's latest fills (or funding payments) on each
// market, at least historyPage and fewer than twice that each: every page
// a caller can ask for, on one market or all, lies within them, so memory
// does not grow with history.
type perMarket[T any] map[string][]T

func (p perMarket[T]) add(market string, v T) {
	s := append(p[market], v)
	if len(s) >= 2*historyPage {
		s = slices.Clone(s[len(s)-historyPage:])
	}
	p[market] = s
}

// newest returns up to limit items, newest first, on market (all when ""),
// walking each market back while more(item) holds; newer orders items
// across markets.
func (p perMarket[T]) newest(market string, limit int, newer func(x, y T) bool, more func(T) bool) []T {
	var markets []string
	for m := range p {
		if market == "" || m == market {
			markets = append(markets, m)
		}
	}
	slices.Sort(markets)
	next := make([]int, len(markets))
	for i, m := range markets {
		next[i] = len(p[m]) - 1
	}
	out := []T{}
	for len(out) < limit {
		best := -1
		for i, m := range markets {
			if next[i] < 0 {
				continue
			}
			if v := p[m][next[i]]; !more(v) {
				next[i] = -1
			} else if best < 0 || newer(v, p[markets[best]][next[best]]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		out = append(out, p[markets[best]][next[best]])
		next[best]--
	}
	return out
}

// oldestFirst returns every item kept, oldest first (for a snapshot).
func (p perMarket[T]) oldestFirst(newer func(x, y T) bool) []T {
	out := p.newest("", math.MaxInt, newer, func(T) bool { return true })
	slices.Reverse(out)
	return out
}

// fillNewer orders fills by id: ids are increasing decimal numbers.
func fillNewer(x, y Fill) bool {
	if len(x.ID) != len(y.ID) {
		return len(x.ID) > len(y.ID)
	}
	return x.ID > y.ID
}

func fundingNewer(x, y FundingPayment) bool { return x.Time.After(y.Time) }
