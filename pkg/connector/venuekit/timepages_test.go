package venuekit

import (
	"context"
	"slices"
	"strconv"
	"testing"
)

// TestTimePages: pages start at the last time read, and entries of that
// time already read are not read twice.
func TestTimePages(t *testing.T) {
	times := []int64{1, 2, 2, 3, 5, 5, 8}
	var froms []int64
	got, err := TimePages(context.Background(), 0, func(_ context.Context, from int64) ([]int, error) {
		froms = append(froms, from)
		var page []int
		for i, at := range times {
			if at >= from && len(page) < 3 {
				page = append(page, i)
			}
		}
		return page, nil
	}, func(i int) int64 { return times[i] }, strconv.Itoa)
	if err != nil || !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Fatalf("got %v, %v", got, err)
	}
	if !slices.Equal(froms, []int64{0, 2, 3, 5, 8}) {
		t.Fatalf("pages from %v", froms)
	}
}
