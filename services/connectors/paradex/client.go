package paradex

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paradex/stark"
)

// resyncEvery is how old a server-time offset may get before the next
// signature measures it again.
const resyncEvery = 10 * time.Minute

// resetMargin is how long after an announced reset the next request goes.
const resetMargin = 20 * time.Millisecond

// maxBody bounds what is read of one answer (/markets/summary?market=ALL
// is about 1.6 MB).
const maxBody = 32 << 20

// client sends Paradex REST requests. Per host it keeps the chain id and
// the clock offset; per account and limit class the quota Paradex last
// reported in its x-ratelimit-* headers.
type client struct {
	http       *http.Client
	now        func() time.Time
	authExpiry time.Duration
	tokens     TokenStore
	// wait blocks for d or until ctx ends; tests replace it.
	wait func(ctx context.Context, d time.Duration) error

	mu      sync.Mutex
	hosts   map[string]*host
	flights map[string]*sync.Mutex // token key → one auth at a time
	quotas  map[string]*quota
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

// quota is what Paradex last said of one limit: remaining requests and
// when the window resets (our clock).
type quota struct {
	remaining int
	reset     time.Time
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
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	tokens := cfg.Tokens
	if tokens == nil {
		tokens = NewMemoryTokens()
	}
	return &client{http: hc, now: now, authExpiry: cfg.AuthExpiry, tokens: tokens, wait: connector.SleepContext,
		hosts: map[string]*host{}, flights: map[string]*sync.Mutex{}, quotas: map[string]*quota{}}
}

func (c *client) host(base string) *host {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hosts[base]
	if h == nil {
		h = &host{base: base, clock: connector.NewServerClock(c.now)}
		c.hosts[base] = h
	}
	return h
}

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
	var body io.Reader
	if r.body != nil {
		raw, err := json.Marshal(r.body)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(raw)
	}
	target := h.base + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		return 0, err
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, connector.Unreachable("Paradex", what, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, connector.Unreachable("Paradex", what, err)
	}
	c.observe(h.base+" "+qkey+" "+r.limit, resp.Header)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		s := c.retryAfter(h.base + " " + qkey + " " + r.limit)
		return resp.StatusCode, connector.RateLimited("429", "", s, "Paradex answered HTTP 429 to %s: too many requests; retry in %d s", what, s)
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if out != nil && len(bytes.TrimSpace(raw)) > 0 {
			if err := json.Unmarshal(raw, out); err != nil {
				return resp.StatusCode, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "",
					"Paradex answered %s with an unexpected body", what)
			}
		}
		return resp.StatusCode, nil
	}
	var e apiError
	_ = json.Unmarshal(raw, &e)
	return resp.StatusCode, upstreamError(resp.StatusCode, e.Error, e.Message, what)
}

// observe keeps x-ratelimit-remaining and x-ratelimit-reset (a Unix time;
// milliseconds when that large) of an answer.
func (c *client) observe(key string, hdr http.Header) {
	rem, err1 := strconv.Atoi(hdr.Get("x-ratelimit-remaining"))
	reset, err2 := strconv.ParseInt(hdr.Get("x-ratelimit-reset"), 10, 64)
	if err1 != nil || err2 != nil {
		return
	}
	at := time.Unix(reset, 0)
	if reset > 1e12 {
		at = time.UnixMilli(reset)
	}
	c.mu.Lock()
	c.quotas[key] = &quota{remaining: rem, reset: at}
	c.mu.Unlock()
}

// admit waits for the reset when Paradex said the quota is used up, so
// the connector slows down before Paradex refuses; a wait past the
// caller's deadline is answered at once as rate-limited.
func (c *client) admit(ctx context.Context, key, what string) error {
	c.mu.Lock()
	q := c.quotas[key]
	var wait time.Duration
	if q != nil && q.remaining <= 0 {
		// The reset is in whole milliseconds: a little past it, so the
		// request lands after the window.
		wait = q.reset.Sub(c.now()) + resetMargin
	}
	c.mu.Unlock()
	if wait <= 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && c.now().Add(wait).After(dl) {
		s := int((wait + time.Second - 1) / time.Second)
		return connector.RateLimited("", "", s, "Paradex's rate limit for %s is used up; retry in %d s", what, s)
	}
	return c.wait(ctx, wait)
}

func (c *client) retryAfter(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if q := c.quotas[key]; q != nil {
		if d := q.reset.Sub(c.now()); d > 0 {
			return int((d + time.Second - 1) / time.Second)
		}
	}
	return 1
}
