package venuekit

import (
	"context"
	"math"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector"
)

// TimePages reads a venue's history that pages by start time (inclusive),
// oldest first: each page starts at the last entry's time (at), and
// entries already read (by key) are skipped, until a page brings nothing
// new.
func TimePages[T any](ctx context.Context, start int64, fetch func(ctx context.Context, from int64) ([]T, error),
	at func(T) int64, key func(T) string) ([]T, error) {
	seen := map[string]bool{}
	return connector.Paginate(ctx, math.MaxInt, func(ctx context.Context, cursor string) ([]T, string, error) {
		from := start
		if cursor != "" {
			from, _ = strconv.ParseInt(cursor, 10, 64)
		}
		page, err := fetch(ctx, from)
		if err != nil {
			return nil, "", err
		}
		fresh := []T{}
		for _, e := range page {
			if k := key(e); !seen[k] {
				seen[k] = true
				fresh = append(fresh, e)
			}
		}
		if len(fresh) == 0 {
			return nil, "", nil
		}
		return fresh, strconv.FormatInt(at(page[len(page)-1]), 10), nil
	})
}
