package venuekit

import (
	"context"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/shopspring/decimal"
)

// PingEvery is how often a venue socket is pinged: within the idle limits
// of the venues that drop a quiet socket (OKX 30 s, Hyperliquid about
// 60 s) and at Bybit's advised 20 s.
const PingEvery = 20 * time.Second

// DialPinged opens a public stream and sends it the text frame ping every
// PingEvery until Close.
func DialPinged(ctx context.Context, venue, url string, ping []byte) (*Socket, error) {
	s, err := Dial(ctx, venue, url)
	if err != nil {
		return nil, err
	}
	s.Keepalive(PingEvery, func(ctx context.Context) error { return s.WriteText(ctx, ping) })
	return s, nil
}

// Null is d as a stream update's optional value: not valid when the
// venue left it out.
func Null(d connector.Decimal) decimal.NullDecimal {
	return decimal.NullDecimal{Decimal: d.D(), Valid: d.Given}
}
