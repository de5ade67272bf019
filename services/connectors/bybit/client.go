package bybit

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// resyncEvery is how old a server-time offset may get before the next
// signed request measures it again.
const resyncEvery = 10 * time.Minute

// maxBody bounds what is read of one Bybit answer.
const maxBody = 32 << 20

// ipCoolDown is how long nothing is sent to a host after HTTP 403: Bybit's
// IP limit (600 requests in 5 s) blocks for at least ten minutes (rate
// limit page).
const ipCoolDown = 10 * time.Minute

// resetMargin is how long after an announced quota reset the next request
// goes out.
const resetMargin = 20 * time.Millisecond

// client signs and sends Bybit v5 REST requests. Per REST host it keeps
// the offset of Bybit's clock and an IP block; per API key and path the
// quota Bybit last reported.
type client struct {
	http       *http.Client
	now        func() time.Time
	recvWindow int64 // milliseconds
	// wait blocks for d or until ctx ends; tests replace it.
	wait func(ctx context.Context, d time.Duration) error

	mu     sync.Mutex
	hosts  map[string]*host
	quotas map[string]*quota // by host + apiKey + path
}

// host is what the client knows about one REST base URL.
type host struct {
	base  string
	clock *connector.ServerClock

	mu          sync.Mutex
	blockedTill time.Time // local time
}

// quota is one endpoint's per-UID limit as Bybit's X-Bapi-Limit-* headers
// last said (rate limit page: limit, remaining, reset timestamp in ms).
type quota struct {
	remaining int
	reset     time.Time // server time
	known     bool
}

// keys are a credential's API key and secret.
type keys struct {
	apiKey string
	secret string
}

// params keep their order: the string signed is exactly the string sent.
type params = connector.Query

// request is one REST call: GETs carry query, POSTs a JSON body.
type request struct {
	method string
	path   string
	query  params
	body   any
	signed bool
}

// envelope is every v5 answer (guide: "Response"): business errors are
// HTTP 200 with retCode != 0.
type envelope struct {
	RetCode    int             `json:"retCode"`
	RetMsg     string          `json:"retMsg"`
	Result     json.RawMessage `json:"result"`
	RetExtInfo json.RawMessage `json:"retExtInfo"`
	Time       int64           `json:"time"`
}

func newClient(cfg Config, hc *http.Client) *client {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &client{
		http:       hc,
		now:        now,
		recvWindow: cfg.RecvWindow.Milliseconds(),
		wait:       connector.SleepContext,
		hosts:      map[string]*host{},
		quotas:     map[string]*quota{},
	}
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

// sign is HMAC-SHA256 of timestamp + apiKey + recvWindow + payload under
// secret, in lower-case hex (guide: "Authentication").
func sign(secret string, timestampMs int64, apiKey string, recvWindowMs int64, payload string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(timestampMs, 10) + apiKey + strconv.FormatInt(recvWindowMs, 10) + payload))
	return hex.EncodeToString(m.Sum(nil))
}

// do sends r to base and decodes a successful answer's result into out
// (when not nil). A request Bybit refused for its timestamp (10002) is
// retried once after measuring the clock again: Bybit did not act on it.
func (c *client) do(ctx context.Context, base string, k *keys, r request, out any) (envelope, error) {
	h := c.host(base)
	if r.signed {
		if k == nil {
			return envelope{}, contract.Errorf(contract.CodeInternal, "signed Bybit request without keys")
		}
		if !h.clock.Fresh(resyncEvery) {
			if err := c.sync(ctx, h); err != nil {
				return envelope{}, err
			}
		}
	}
	for attempt := 0; ; attempt++ {
		env, err := c.send(ctx, h, k, r)
		if err != nil {
			return env, err
		}
		if env.RetCode == 0 {
			if out != nil && len(env.Result) > 0 {
				if err := json.Unmarshal(env.Result, out); err != nil {
					return env, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "",
						"Bybit answered %s %s with an unexpected result", r.method, r.path)
				}
			}
			return env, nil
		}
		if r.signed && attempt == 0 && env.RetCode == 10002 {
			if err := c.sync(ctx, h); err != nil {
				return env, err
			}
			continue
		}
		if env.RetCode == 10006 {
			return env, c.limited(h, k, r, env)
		}
		return env, upstreamError(env.RetCode, env.RetMsg)
	}
}

// limited is the answer to retCode 10006: the endpoint's quota for this
// key is spent until the reset Bybit announced.
func (c *client) limited(h *host, k *keys, r request, env envelope) error {
	wait := time.Second
	if q := c.quota(h, k, r.path); q != nil {
		c.mu.Lock()
		if d := q.reset.Sub(h.clock.Now()); d > 0 {
			wait = d
		}
		q.remaining, q.known = 0, true
		c.mu.Unlock()
	}
	s := int((wait + time.Second - 1) / time.Second)
	return connector.RateLimited("10006", env.RetMsg, s, "Bybit refused %s: too many requests for this API key (retCode 10006); retry in %d s", r.path, s)
}

func (c *client) quota(h *host, k *keys, path string) *quota {
	if k == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	id := h.base + " " + k.apiKey + " " + path
	q := c.quotas[id]
	if q == nil {
		q = &quota{}
		c.quotas[id] = q
	}
	return q
}

// admit waits until the endpoint's quota has room again when Bybit said it
// is used up, so the connector slows down before Bybit refuses; a wait
// past the caller's deadline is answered at once as rate-limited.
func (c *client) admit(ctx context.Context, h *host, k *keys, path string) error {
	h.mu.Lock()
	blocked := h.blockedTill.Sub(c.now())
	h.mu.Unlock()
	if blocked > 0 {
		s := int((blocked + time.Second - 1) / time.Second)
		return connector.RateLimited("403", "", s, "Bybit blocked this IP (HTTP 403); the connector sends nothing there for %d s", s)
	}
	q := c.quota(h, k, path)
	if q == nil {
		return nil
	}
	c.mu.Lock()
	var wait time.Duration
	if q.known && q.remaining <= 0 {
		// The reset is in whole milliseconds: a little past it, so the
		// request lands in the new window.
		wait = q.reset.Sub(h.clock.Now()) + resetMargin
	}
	c.mu.Unlock()
	if wait <= 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && c.now().Add(wait).After(dl) {
		s := int((wait + time.Second - 1) / time.Second)
		return connector.RateLimited("", "", s, "Bybit's quota for %s on this API key is used up; retry in %d s", path, s)
	}
	return c.wait(ctx, wait)
}

// observe takes the quota headers of an answer.
func (c *client) observe(h *host, k *keys, path string, hdr http.Header) {
	rem, err1 := strconv.Atoi(hdr.Get("X-Bapi-Limit-Status"))
	reset, err2 := strconv.ParseInt(hdr.Get("X-Bapi-Limit-Reset-Timestamp"), 10, 64)
	q := c.quota(h, k, path)
	if err1 != nil || err2 != nil || q == nil {
		return
	}
	c.mu.Lock()
	q.remaining, q.reset, q.known = rem, time.UnixMilli(reset), true
	c.mu.Unlock()
}

// send makes one HTTP exchange and decodes the envelope.
func (c *client) send(ctx context.Context, h *host, k *keys, r request) (envelope, error) {
	if err := ctx.Err(); err != nil {
		return envelope{}, err
	}
	if err := c.admit(ctx, h, k, r.path); err != nil {
		return envelope{}, err
	}
	query, payload := r.query.Encode(), ""
	var body io.Reader
	if r.method == http.MethodPost {
		raw, err := json.Marshal(r.body)
		if err != nil {
			return envelope{}, err
		}
		payload, body = string(raw), bytes.NewReader(raw)
	} else {
		payload = query
	}
	target := h.base + r.path
	if query != "" {
		target += "?" + query
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		return envelope{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if r.signed {
		ts := h.clock.Now().UnixMilli()
		req.Header.Set("X-BAPI-API-KEY", k.apiKey)
		req.Header.Set("X-BAPI-TIMESTAMP", strconv.FormatInt(ts, 10))
		req.Header.Set("X-BAPI-RECV-WINDOW", strconv.FormatInt(c.recvWindow, 10))
		req.Header.Set("X-BAPI-SIGN", sign(k.secret, ts, k.apiKey, c.recvWindow, payload))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return envelope{}, ctx.Err()
		}
		return envelope{}, connector.Unreachable("Bybit", r.method+" "+r.path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		if ctx.Err() != nil {
			return envelope{}, ctx.Err()
		}
		return envelope{}, connector.Unreachable("Bybit", r.method+" "+r.path, err)
	}
	c.observe(h, k, r.path, resp.Header)
	switch {
	case resp.StatusCode == http.StatusForbidden:
		h.mu.Lock()
		h.blockedTill = c.now().Add(ipCoolDown)
		h.mu.Unlock()
		return envelope{}, connector.RateLimited("403", "", int(ipCoolDown/time.Second),
			"Bybit answered HTTP 403: this IP went over 600 requests in 5 s (or its region is blocked); the connector sends nothing there for 10 minutes")
	case resp.StatusCode == http.StatusTooManyRequests:
		return envelope{}, connector.RateLimited("429", "", 1, "Bybit answered HTTP 429 (system protection); retry in a second")
	case resp.StatusCode != http.StatusOK:
		return envelope{}, httpError(resp.StatusCode, r)
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return envelope{}, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "",
			"Bybit answered %s %s with a body that is not its JSON envelope", r.method, r.path)
	}
	return env, nil
}

// sync measures Bybit's clock with GET /v5/market/time.
func (c *client) sync(ctx context.Context, h *host) error {
	return h.clock.Measure(ctx, func(ctx context.Context) (time.Time, error) {
		var st struct {
			TimeNano string `json:"timeNano"`
		}
		if _, err := c.do(ctx, h.base, nil, request{method: http.MethodGet, path: "/v5/market/time"}, &st); err != nil {
			return time.Time{}, err
		}
		ns, err := strconv.ParseInt(st.TimeNano, 10, 64)
		if err != nil || ns <= 0 {
			return time.Time{}, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "Bybit answered /v5/market/time without timeNano")
		}
		return time.Unix(0, ns), nil
	})
}
