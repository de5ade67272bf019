package venuekit

import "github.com/shopspring/decimal"

// AfterPages reads a list a page at a time, each page asked after the
// last row of the one before, until a page shorter than size.
func AfterPages[T any](size int, page func(after string) ([]T, error), last func(T) string) ([]T, error) {
	var all []T
	for after := ""; ; {
		p, err := page(after)
		if err != nil {
			return nil, err
		}
		all = append(all, p...)
		if len(p) < size {
			return all, nil
		}
		after = last(p[len(p)-1])
	}
}

// IfPositive is d for an optional event field, nil when the venue sent
// zero or nothing (no price on a market order, no liquidation price).
func IfPositive(d decimal.Decimal) *decimal.Decimal {
	if !d.IsPositive() {
		return nil
	}
	return &d
}
