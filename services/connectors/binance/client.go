package binance

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// resyncEvery is how old a server-time offset may get before the next
// signed request measures it again.
const resyncEvery = 10 * time.Minute

// maxBody bounds what is read of one Binance answer.
const maxBody = 32 << 20

// client signs and sends Binance REST requests. It keeps, per REST host,
// the offset of Binance's clock from ours and the request-weight budget.
type client struct {
	http       *http.Client
	now        func() time.Time
	recvWindow int64 // milliseconds
	// wait blocks for d or until ctx ends; tests replace it.
	wait func(ctx context.Context, d time.Duration) error

	mu    sync.Mutex
	hosts map[string]*host
}

// host is what the client knows about one REST base URL.
type host struct {
	base  string
	gate  *weightGate
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
	}
}

func (c *client) host(base string) *host {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hosts[base]
	if h == nil {
		h = &host{base: base, gate: newWeightGate(), clock: connector.NewServerClock(c.now)}
		c.hosts[base] = h
	}
	return h
}

// serverNow is our best estimate of Binance's clock.
func (c *client) serverNow(h *host) time.Time { return h.clock.Now() }

// sign returns the HMAC-SHA256 of payload under secret as lower-case hex,
// Binance's `signature` parameter.
func sign(secret, payload string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(payload))
	return hex.EncodeToString(m.Sum(nil))
}

// signedPayload appends timestamp and recvWindow to the encoded
// parameters and returns the string to send, signature last.
func signedPayload(p params, secret string, timestampMs, recvWindowMs int64) string {
	q := p.Add("recvWindow", strconv.FormatInt(recvWindowMs, 10)).
		Add("timestamp", strconv.FormatInt(timestampMs, 10)).Encode()
	return q + "&signature=" + sign(secret, q)
}

// do sends r to base and decodes a 200 answer into out (when not nil).
// Binance errors come back as *contract.Error (EXCHANGE_ERROR with a
// reason); a passed deadline as the context's error. A signed request
// rejected for its timestamp (-1021) is retried once after measuring the
// clock offset again: Binance did not act on it.
func (c *client) do(ctx context.Context, base string, k *keys, r request, out any) error {
	h := c.host(base)
	if r.signed {
		if k == nil {
			return contract.Errorf(contract.CodeInternal, "signed Binance request without keys")
		}
		if err := c.ensureSynced(ctx, h); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		status, body, err := c.send(ctx, h, k, r)
		if err != nil {
			return err
		}
		if status == http.StatusOK {
			if out == nil {
				return nil
			}
			if err := json.Unmarshal(body, out); err != nil {
				return contract.Upstream(contract.ReasonUpstreamUnavailable, "", "",
					"Binance answered %s %s with an unexpected body", r.method, r.path)
			}
			return nil
		}
		var e struct {
			Code int    `json:"code"`
			Msg  string `json:"msg"`
		}
		_ = json.Unmarshal(body, &e)
		if r.signed && attempt == 0 && (e.Code == -1021 || e.Code == -5028) {
			if err := c.sync(ctx, h); err != nil {
				return err
			}
			continue
		}
		return upstreamError(status, e.Code, e.Msg)
	}
}

// send makes one HTTP exchange within the host's weight budget.
func (c *client) send(ctx context.Context, h *host, k *keys, r request) (int, []byte, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	wait, banned := h.gate.admit(c.serverNow(h), r.weight)
	if banned > 0 {
		s := int((banned + time.Second - 1) / time.Second)
		return 0, nil, connector.RateLimited("", "", s,
			"Binance rate-limited this IP; the connector sends nothing there for %d s", s)
	}
	if wait > 0 {
		if dl, ok := ctx.Deadline(); ok && c.now().Add(wait).After(dl) {
			s := int((wait + time.Second - 1) / time.Second)
			return 0, nil, connector.RateLimited("", "", s,
				"Binance request weight of this IP is nearly used up this minute; retry in %d s", s)
		}
		if err := c.wait(ctx, wait); err != nil {
			return 0, nil, err
		}
	}
	q := r.params.Encode()
	if r.signed {
		ts := h.clock.Now().UnixMilli()
		q = signedPayload(r.params, k.secret, ts, c.recvWindow)
	}
	target := h.base + r.path
	var body io.Reader
	if r.method == http.MethodGet || r.method == http.MethodDelete {
		if q != "" {
			target += "?" + q
		}
	} else {
		body = strings.NewReader(q)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if k != nil {
		req.Header.Set("X-MBX-APIKEY", k.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, ctx.Err()
		}
		return 0, nil, connector.Unreachable("Binance", r.method+" "+r.path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, ctx.Err()
		}
		return 0, nil, connector.Unreachable("Binance", r.method+" "+r.path, err)
	}
	now := c.serverNow(h)
	h.gate.observe(now, resp.Header)
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusTeapot {
		var e struct {
			Code int    `json:"code"`
			Msg  string `json:"msg"`
		}
		_ = json.Unmarshal(raw, &e)
		d := retryAfter(now, resp.StatusCode, resp.Header, e.Msg)
		h.gate.ban(now.Add(d))
		s := int((d + time.Second - 1) / time.Second)
		code := ""
		if e.Code != 0 {
			code = strconv.Itoa(e.Code)
		}
		return 0, nil, connector.RateLimited(code, e.Msg, s, "Binance answered HTTP %d (rate limit); retry in %d s", resp.StatusCode, s)
	}
	return resp.StatusCode, raw, nil
}

// ensureSynced measures the clock offset when it never was or is old.
func (c *client) ensureSynced(ctx context.Context, h *host) error {
	if h.clock.Fresh(resyncEvery) {
		return nil
	}
	return c.sync(ctx, h)
}

// sync measures Binance's clock against ours with GET /fapi/v1/time.
func (c *client) sync(ctx context.Context, h *host) error {
	return h.clock.Measure(ctx, func(ctx context.Context) (time.Time, error) {
		var st struct {
			ServerTime int64 `json:"serverTime"`
		}
		if err := c.do(ctx, h.base, nil, request{method: http.MethodGet, path: "/fapi/v1/time", weight: 1}, &st); err != nil {
			return time.Time{}, err
		}
		if st.ServerTime <= 0 {
			return time.Time{}, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "Binance answered /fapi/v1/time without serverTime")
		}
		return time.UnixMilli(st.ServerTime), nil
	})
}

// errNoKeys is returned for a credential without apiKey or apiSecret.
var errNoKeys = errors.New("binance credential lacks apiKey or apiSecret")
