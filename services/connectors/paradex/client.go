package paradex

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paradex/stark"
)

// client sends Paradex REST requests. Per host it keeps the chain id and
// the clock offset; per account and limit class the quota Paradex last
// reported in its x-ratelimit-* headers.
type client struct {
	http       venuekit.HTTP
	now        func() time.Time
	authExpiry time.Duration
	tokens     TokenStore
	// wait blocks for d or until ctx ends; tests replace it.
	wait   func(ctx context.Context, d time.Duration) error
	hosts  *venuekit.Hosts[host]
	quotas venuekit.Quotas // our clock
	// flights: one auth at a time per token key.
	flights venuekit.Flights
}

type host struct {
	base  string
	clock *connector.ServerClock

	mu    sync.Mutex
	chain string
	// accountHash and proxyHash are the class hashes main accounts are
	// deployed with (nil when /system/config does not say).
	accountHash, proxyHash *big.Int
}

// request is one REST call.
type request struct {
	method string
	path   string
	query  url.Values
	body   any
	header http.Header
	// limit names the rate-limit class (rate-limits page: auth, orders,
	// private reads, public) so quotas are tracked apart.
	limit string
}

func newClient(cfg Config, hc *http.Client) *client {
	now := cfg.Clock()
	tokens := cfg.Tokens
	if tokens == nil {
		tokens = NewMemoryTokens()
	}
	return &client{http: venuekit.HTTP{Venue: "Paradex", Client: hc}, now: now, authExpiry: cfg.AuthExpiry, tokens: tokens,
		wait:  connector.SleepContext,
		hosts: venuekit.NewHosts(func(base string) *host { return &host{base: base, clock: connector.NewServerClock(now)} })}
}

func (c *client) host(base string) *host { return c.hosts.Get(base) }

// do sends r; private requests carry the credential's JWT. A 401 is
// answered once more with a fresh token: the cached one may have been
// revoked or expired early.
func (c *client) do(ctx context.Context, base string, acct *account, r request, out any) (int, error) {
	h := c.host(base)
	if acct == nil {
		if r.limit == "" {
			r.limit = "public"
		}
		return c.send(ctx, h, r, "", out)
	}
	if r.limit == "" {
		r.limit = "read"
		if r.method != http.MethodGet {
			r.limit = "orders"
		}
	}
	qkey := stark.HexFelt(acct.address)
	refused := ""
	for attempt := 0; ; attempt++ {
		jwt, err := c.token(ctx, h, acct, refused)
		if err != nil {
			return 0, err
		}
		if r.header == nil {
			r.header = http.Header{}
		}
		r.header.Set("Authorization", "Bearer "+jwt)
		status, err := c.send(ctx, h, r, qkey, out)
		if status == http.StatusUnauthorized && attempt == 0 {
			refused = jwt
			continue
		}
		return status, err
	}
}

// send makes one HTTP exchange: 2xx decodes into out, 429 is
// UPSTREAM_RATE_LIMITED, anything else Paradex's ApiError.
func (c *client) send(ctx context.Context, h *host, r request, qkey string, out any) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	what := r.method + " " + r.path
	if err := c.admit(ctx, h.base+" "+qkey+" "+r.limit, what); err != nil {
		return 0, err
	}
	req, err := c.request(ctx, h, r)
	if err != nil {
		return 0, err
	}
	ans, err := c.http.Send(ctx, req, what)
	if err != nil {
		return 0, err
	}
	raw, status := ans.Body, ans.Status
	c.observe(h.base+" "+qkey+" "+r.limit, ans.Header)
	switch {
	case status == http.StatusTooManyRequests:
		s := c.retryAfter(h.base + " " + qkey + " " + r.limit)
		return status, connector.RateLimited("429", "", s, "Paradex answered HTTP 429 to %s: too many requests; retry in %d s", what, s)
	case status >= 200 && status < 300:
		if out != nil && len(bytes.TrimSpace(raw)) > 0 {
			if err := json.Unmarshal(raw, out); err != nil {
				return status, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "",
					"Paradex answered %s with an unexpected body", what)
			}
		}
		return status, nil
	}
	var e apiError
	_ = json.Unmarshal(raw, &e)
	return status, upstreamError(status, e.Error, e.Message, what)
}

// request is r with its query, its JSON body and headers.
func (c *client) request(ctx context.Context, h *host, r request) (*http.Request, error) {
	var body []byte
	if r.body != nil {
		var err error
		if body, err = json.Marshal(r.body); err != nil {
			return nil, err
		}
	}
	req, err := venuekit.NewRequest(ctx, r.method, h.base+r.path, r.query.Encode(), body, "application/json")
	if err != nil {
		return nil, err
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// observe keeps x-ratelimit-remaining and x-ratelimit-reset (a Unix time;
// milliseconds when that large) of an answer.
func (c *client) observe(key string, hdr http.Header) {
	c.quotas.Observe(key, hdr, "x-ratelimit-remaining", "x-ratelimit-reset")
}

// admit waits for the reset when Paradex said the quota is used up, so
// the connector slows down before Paradex refuses; a wait past the
// caller's deadline is answered at once as rate-limited.
func (c *client) admit(ctx context.Context, key, what string) error {
	return venuekit.Pace(ctx, c.now(), c.quotas.Wait(key, c.now()), c.wait, "Paradex's rate limit for %s is used up; retry in %d s", what)
}

func (c *client) retryAfter(key string) int {
	if d := c.quotas.Reset(key, c.now()); d > 0 {
		return venuekit.Seconds(d)
	}
	return 1
}
