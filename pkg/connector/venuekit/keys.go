package venuekit

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
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

// HMACSHA256 is the HMAC-SHA256 of payload under secret, the signature
// the API-key venues (Binance, Bybit, OKX) encode as hex or base64.
func HMACSHA256(secret, payload string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(payload))
	return m.Sum(nil)
}
