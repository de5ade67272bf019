package paradex

import "sort"

func sortFills(f []fillResp) {
	sort.SliceStable(f, func(i, j int) bool { return f[i].CreatedAt > f[j].CreatedAt })
}
