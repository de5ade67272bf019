package binance

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// client signs and sends Binance REST requests. It keeps, per REST host,
// the offset of Binance's clock from ours and the request-weight budget.
type client struct {
	http       venuekit.HTTP
	now        func() time.Time
	recvWindow int64 // milliseconds
	// wait blocks for d or until ctx ends; tests replace it.
	wait  func(ctx context.Context, d time.Duration) error
	hosts *venuekit.Hosts[host]
}

// host is what the client knows about one REST base URL.
type host struct {
	base  string
	gate  *venuekit.WeightGate
	clock *connector.ServerClock
}

// keys are a credential's API key and secret.
type keys struct {
	apiKey string
	secret string
}

// params keep their order: the string signed is exactly the string sent.
type params = connector.Query

// request is one REST call.
type request struct {
	method string
	path   string
	params params
	signed bool // TRADE / USER_DATA: timestamp, recvWindow and signature
	weight int  // IP request weight (fact sheet §11)
}

// defaultWeightLimit is Binance's weight a minute per IP unless
// exchangeInfo says otherwise (fact sheet §10).
const defaultWeightLimit = 2400

func newClient(cfg Config, hc *http.Client) *client {
	now := cfg.Clock()
	return &client{
		http:       venuekit.HTTP{Venue: "Binance", Client: hc},
		now:        now,
		recvWindow: cfg.RecvWindow.Milliseconds(),
		wait:       connector.SleepContext,
		hosts: venuekit.NewHosts(func(base string) *host {
			return &host{base: base, gate: venuekit.NewWeightGate("X-MBX-USED-WEIGHT-1M", defaultWeightLimit), clock: connector.NewServerClock(now)}
		}),
	}
}

func (c *client) host(base string) *host { return c.hosts.Get(base) }

// sign returns the HMAC-SHA256 of payload under secret as lower-case hex,
// Binance's `signature` parameter.
func sign(secret, payload string) string {
	return hex.EncodeToString(venuekit.HMACSHA256(secret, payload))
}

// signedPayload appends timestamp and recvWindow to the encoded
// parameters and returns the string to send, signature last.
func signedPayload(p params, secret string, timestampMs, recvWindowMs int64) string {
	q := p.Add("recvWindow", strconv.FormatInt(recvWindowMs, 10)).
		Add("timestamp", strconv.FormatInt(timestampMs, 10)).Encode()
	return q + "&signature=" + sign(secret, q)
}

// do sends r to base and decodes a 200 answer into out (fapi.Host.Do); a
// signed request refused for its timestamp (-1021, -5028) is retried once.
func (c *client) do(ctx context.Context, base string, k *keys, r request, out any) error {
	h := c.host(base)
	if r.signed && k == nil {
		return contract.Errorf(contract.CodeInternal, "signed Binance request without keys")
	}
	return fapi.Host{Gate: h.gate, Clock: h.clock}.Do(ctx, venueErrors, fapi.Call{Method: r.method, Path: r.path,
		Signed: r.signed, Stale: []int{-1021, -5028}, Time: c.serverTime(h),
		Send: func() (int, []byte, error) { return c.send(ctx, h, k, r) }}, out)
}

// send makes one HTTP exchange within the host's weight budget.
func (c *client) send(ctx context.Context, h *host, k *keys, r request) (int, []byte, error) {
	return fapi.Host{Gate: h.gate, Clock: h.clock}.Send(ctx, &c.http, c.now, c.wait, r.weight, r.method+" "+r.path,
		func() (*http.Request, error) { return c.request(ctx, h, k, r) })
}

// request is r signed (when it must be) at the host's clock: GET and
// DELETE carry the parameters in the query, others in a form body.
func (c *client) request(ctx context.Context, h *host, k *keys, r request) (*http.Request, error) {
	q := r.params.Encode()
	if r.signed {
		q = signedPayload(r.params, k.secret, h.clock.Now().UnixMilli(), c.recvWindow)
	}
	var req *http.Request
	var err error
	if r.method == http.MethodGet || r.method == http.MethodDelete {
		req, err = venuekit.NewRequest(ctx, r.method, h.base+r.path, q, nil, "")
	} else {
		req, err = venuekit.NewRequest(ctx, r.method, h.base+r.path, "", []byte(q), "application/x-www-form-urlencoded")
	}
	if err == nil && k != nil {
		req.Header.Set("X-MBX-APIKEY", k.apiKey)
	}
	return req, err
}

// serverTime reads Binance's clock with GET /fapi/v1/time.
func (c *client) serverTime(h *host) func(context.Context) (time.Time, error) {
	return fapi.ServerTime("Binance", "/fapi/v1/time", func(ctx context.Context, out any) error {
		return c.do(ctx, h.base, nil, request{method: http.MethodGet, path: "/fapi/v1/time", weight: 1}, out)
	})
}

// errNoKeys is returned for a credential without apiKey or apiSecret.
var errNoKeys = errors.New("binance credential lacks apiKey or apiSecret")
