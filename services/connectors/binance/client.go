package binance

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
)

// keys are a credential's API key and secret.
type keys struct {
	apiKey string
	secret string
}

// newClient is the REST client: per host Binance's clock and the
// request-weight budget. A signed request refused for its timestamp
// (-1021, -5028) is retried once.
func newClient(cfg Config, hc *http.Client) *fapi.Client[*keys] {
	recvWindow := cfg.RecvWindow.Milliseconds()
	return &fapi.Client[*keys]{HTTP: venuekit.HTTP{Venue: "Binance", Client: hc}, Now: cfg.Clock(), Wait: connector.SleepContext,
		Errors: venueErrors, Prefix: prefix, Stale: []int{-1021, -5028}, Keys: credKeys,
		Base: func(c connector.Credential) string { return cfg.BaseURL(c.Environment) },
		Build: func(ctx context.Context, s *fapi.Server, k *keys, r fapi.Request) (*http.Request, error) {
			return request(ctx, s, k, r, recvWindow)
		}}
}

// sign returns the HMAC-SHA256 of payload under secret as lower-case hex,
// Binance's `signature` parameter.
func sign(secret, payload string) string {
	return hex.EncodeToString(venuekit.HMACSHA256(secret, payload))
}

// signedPayload appends timestamp and recvWindow to the encoded
// parameters and returns the string to send, signature last.
func signedPayload(p connector.Query, secret string, timestampMs, recvWindowMs int64) string {
	q := p.Add("recvWindow", strconv.FormatInt(recvWindowMs, 10)).
		Add("timestamp", strconv.FormatInt(timestampMs, 10)).Encode()
	return q + "&signature=" + sign(secret, q)
}

// request is r signed (when it must be) at the host's clock: GET and
// DELETE carry the parameters in the query, others in a form body. Any
// call with keys (the listen key's too) carries the API key.
func request(ctx context.Context, s *fapi.Server, k *keys, r fapi.Request, recvWindow int64) (*http.Request, error) {
	q := r.Params.Encode()
	if r.Signed {
		q = signedPayload(r.Params, k.secret, s.Clock.Now().UnixMilli(), recvWindow)
	}
	req, err := fapi.FormRequest(ctx, s, r, q, true)
	if err == nil && k != nil {
		req.Header.Set("X-MBX-APIKEY", k.apiKey)
	}
	return req, err
}

// errNoKeys is returned for a credential without apiKey or apiSecret.
var errNoKeys = errors.New("binance credential lacks apiKey or apiSecret")
