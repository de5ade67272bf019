package simkit

import (
	"slices"
	"testing"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

func TestBookDiff(t *testing.T) {
	l := func(p, s string) paper.Level {
		return paper.Level{Price: decimal.RequireFromString(p), Size: decimal.RequireFromString(s)}
	}
	prev := []paper.Level{l("100", "1"), l("99", "2"), l("98", "3")}
	next := []paper.Level{l("100", "1"), l("99", "5"), l("97", "4")}
	got := BookDiff(prev, next)
	want := [][2]string{{"99", "5"}, {"97", "4"}, {"98", "0"}}
	if !slices.Equal(got, want) {
		t.Fatalf("BookDiff = %v, want %v", got, want)
	}
	if d := BookDiff(next, next); len(d) != 0 {
		t.Fatalf("an unchanged book differs: %v", d)
	}
}
