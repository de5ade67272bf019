package simkit

import (
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

// BookDiff is what a venue's book-delta message carries when a side moves
// from prev to next: next's levels that are new or changed, then prev's
// levels gone from next with size "0" (a deletion), as [price, size].
func BookDiff(prev, next []paper.Level) [][2]string {
	old := map[string]decimal.Decimal{}
	for _, l := range prev {
		old[l.Price.String()] = l.Size
	}
	out := [][2]string{}
	for _, l := range next {
		k := l.Price.String()
		if q, ok := old[k]; !ok || !q.Equal(l.Size) {
			out = append(out, [2]string{k, l.Size.String()})
		}
		delete(old, k)
	}
	for k := range old {
		out = append(out, [2]string{k, "0"})
	}
	return out
}
