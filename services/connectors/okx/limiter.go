package okx

import "time"

// rateWindow is the window OKX counts requests in (fact sheet §9: limits
// are per 2 seconds).
const rateWindow = 2 * time.Second

// rule is an endpoint's budget, kept per host in a venuekit.Windows: n
// requests per rateWindow, counted per API key for private endpoints (OKX
// counts per UID) and per IP for public ones, and per instrument too where
// OKX says so (fact sheet §5, §9).
type rule struct {
	n      int
	byInst bool
}

// key names the budget a request draws on.
func (r rule) key(req request, k *keys) string {
	s := req.method + " " + req.path
	if k != nil && req.signed {
		s += " " + k.apiKey
	}
	if r.byInst {
		s += " " + req.instID
	}
	return s
}
