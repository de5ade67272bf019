package venuekit

import (
	"context"
	"regexp"
	"sync"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/symbol"
	"github.com/shopspring/decimal"
)

// Keys are an API-key venue's credential: key, secret and, where the venue
// has one (OKX), passphrase.
type Keys struct {
	APIKey     string
	Secret     string
	Passphrase string
}

// CheckKeys is TestCredentials for a venue whose check is one signed read:
// keys reads the credential's secret (a bad one is BadSecret), probe makes
// the read with them (a refusal is valid:false).
func CheckKeys[K any](ctx context.Context, x contract.Exchange, keys func() (K, error), probe func(context.Context, K) error) (bool, error) {
	k, err := keys()
	if err != nil {
		return false, connector.BadSecret(x)
	}
	if err := probe(ctx, k); err != nil {
		return false, connector.RejectedBy(err)
	}
	return true, nil
}

// ClientIDRule is a venue's rule for client order ids, checked before
// anything is sent.
type ClientIDRule struct {
	Venue   string
	Pattern *regexp.Regexp
	Takes   string // what the venue takes: "1 to 36 characters of letters, digits, - and _"
}

// Check refuses an id the venue would reject.
func (r ClientIDRule) Check(id string) error {
	if !r.Pattern.MatchString(id) {
		return contract.Errorf(contract.CodeInvalidRequest,
			"field \"clientOrderId\": %q cannot be sent to %s, which takes %s", id, r.Venue, r.Takes)
	}
	return nil
}

// Sides are a venue's words for buy and sell.
type Sides struct{ Buy, Sell string }

// Side reads the venue's word; anything but Sell is a buy.
func (s Sides) Side(w string) contract.Side {
	if w == s.Sell {
		return contract.Sell
	}
	return contract.Buy
}

// Wire is the venue's word for side.
func (s Sides) Wire(side contract.Side) string {
	if side == contract.Sell {
		return s.Sell
	}
	return s.Buy
}

// Bps converts a fee rate (0.0002) to basis points (2).
func Bps(rate decimal.Decimal) decimal.Decimal { return rate.Mul(decimal.NewFromInt(10000)) }

// Lists keeps each host's (or scope's) last Markets answer, so operations
// that need the market list read it once.
type Lists struct {
	mu sync.Mutex
	m  map[string][]connector.Market
}

// Set records key's list.
func (l *Lists) Set(key string, list []connector.Market) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string][]connector.Market{}
	}
	l.m[key] = list
}

// Get is key's last list, or load's answer (load is the adapter's Markets,
// which Sets it) when there is none yet.
func (l *Lists) Get(ctx context.Context, key string, load func(context.Context) ([]connector.Market, error)) ([]connector.Market, error) {
	l.mu.Lock()
	list := l.m[key]
	l.mu.Unlock()
	if list != nil {
		return list, nil
	}
	return load(ctx)
}

// Levels are up to n book levels of price and size pairs.
func Levels(in [][2]connector.Decimal, n int) []contract.Level {
	out := make([]contract.Level, 0, min(len(in), n))
	for _, l := range in {
		if len(out) == n {
			break
		}
		out = append(out, contract.Level{l[0].D(), l[1].D()})
	}
	return out
}

// NewMarket is the market a venue lists as native when the symbol parses
// and is quoted in quote (the one quote a connector lists); the venue adds
// its rules (tick, lot, minimums, leverage).
func NewMarket(native, quote string) (connector.Market, bool) {
	sym, err := symbol.Parse(native)
	if err != nil || sym.Quote != quote {
		return connector.Market{}, false
	}
	return connector.Market{Canonical: sym.Canonical(quote), Native: native, Base: sym.Base, Quote: quote,
		Multiplier: max(sym.Multiplier, 1)}, true
}
