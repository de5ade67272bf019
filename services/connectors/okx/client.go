package okx

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// client signs and sends OKX REST requests. It keeps, per REST host, the
// offset of OKX's clock from ours and the per-endpoint request budgets.
type client struct {
	venuekit.Client[host]
	expTime time.Duration
}

// host is what the client knows about one REST base URL.
type host struct {
	base  string
	clock *connector.ServerClock
	gate  *venuekit.Windows
}

// keys are a credential's API key, secret and passphrase, and whether it
// is a demo-trading credential.
type keys struct {
	apiKey     string
	secret     string
	passphrase string
}

// params keep their order: the string signed is exactly the string sent.
type params = connector.Query

// request is one REST call.
type request struct {
	method string
	path   string
	query  params // GET
	body   any    // POST: sent as JSON
	signed bool
	demo   bool // x-simulated-trading: 1 (testnet credentials only)
	// items: the answer carries per-item sCode; top-level code 1 (all
	// failed) and 2 (partial) are answers for the caller, not errors.
	items bool
	// expires sends expTime: OKX drops the order if it arrives too late.
	expires bool
	limit   rule
	instID  string // for per-instrument limits
}

func newClient(cfg Config, hc *http.Client) *client {
	return &client{Client: venuekit.NewClient("OKX", hc, cfg.Clock(), func(base string, clock *connector.ServerClock) *host {
		return &host{base: base, clock: clock, gate: venuekit.NewWindows(rateWindow)}
	}), expTime: cfg.ExpTime}
}

// timestamp is OK-ACCESS-TIMESTAMP: ISO-8601 UTC with milliseconds (fact
// sheet §2).
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// sign is OK-ACCESS-SIGN: base64 of HMAC-SHA256 over timestamp + METHOD +
// request path (with ?query) + body.
func sign(secret, ts, method, requestPath, body string) string {
	return base64.StdEncoding.EncodeToString(venuekit.HMACSHA256(secret, ts+strings.ToUpper(method)+requestPath+body))
}

// wsLogin is the private socket's login frame: timestamp in seconds, sign
// as for REST over timestamp+"GET/users/self/verify".
func wsLogin(k *keys, now time.Time) map[string]any {
	ts := strconv.FormatInt(now.Unix(), 10)
	return map[string]any{"op": "login", "args": []map[string]string{{"apiKey": k.apiKey, "passphrase": k.passphrase,
		"timestamp": ts, "sign": sign(k.secret, ts, "GET", "/users/self/verify", "")}}}
}

// code is OKX's code or sCode: a string on the wire, tolerated as a number.
type code = connector.Text

// envelope is every OKX REST answer (fact sheet §3).
type envelope struct {
	Code code            `json:"code"`
	Msg  string          `json:"msg"`
	Data json.RawMessage `json:"data"`
}

// itemResult is the per-item outcome trading endpoints add to data[i].
type itemResult struct {
	SCode code   `json:"sCode"`
	SMsg  string `json:"sMsg"`
}

// do sends r to base and decodes the data of a successful answer into out
// (when not nil). OKX errors come back as *contract.Error (EXCHANGE_ERROR
// with a reason); a passed deadline as the context's error. A signed
// request rejected for its timestamp (50102) is retried once after
// measuring the clock offset again: OKX did not act on it.
func (c *client) do(ctx context.Context, base string, k *keys, r request, out any) error {
	h := c.Host(base)
	if r.signed {
		if k == nil {
			return contract.Errorf(contract.CodeInternal, "signed OKX request without keys")
		}
		if err := venuekit.Synced(ctx, h.clock, c.serverTime(h, r.demo)); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		status, raw, err := c.send(ctx, h, k, r)
		if err != nil {
			return err
		}
		var env envelope
		if jerr := json.Unmarshal(raw, &env); jerr != nil || (status == http.StatusOK && env.Code == "") {
			if status != http.StatusOK {
				return upstreamError(status, "", "")
			}
			return contract.Upstream(contract.ReasonUpstreamUnavailable, "", "",
				"OKX answered %s %s with an unexpected body", r.method, r.path)
		}
		if status == http.StatusOK && (env.Code == "0" || (r.items && (env.Code == "1" || env.Code == "2"))) {
			if out == nil || len(env.Data) == 0 {
				return nil
			}
			if err := json.Unmarshal(env.Data, out); err != nil {
				return contract.Upstream(contract.ReasonUpstreamUnavailable, "", "",
					"OKX answered %s %s with data of an unexpected shape", r.method, r.path)
			}
			return nil
		}
		ec, msg := string(env.Code), env.Msg
		// A failed single order carries its reason in data[0].sCode (fact
		// sheet §0 #11): it, not the top-level code, is the answer.
		var items []itemResult
		if json.Unmarshal(env.Data, &items) == nil && len(items) > 0 && items[0].SCode != "" && items[0].SCode != "0" {
			ec, msg = string(items[0].SCode), items[0].SMsg
		}
		if r.signed && attempt == 0 && ec == "50102" {
			if err := h.clock.Measure(ctx, c.serverTime(h, r.demo)); err != nil {
				return err
			}
			continue
		}
		if ec == "50011" || ec == "50061" {
			s := h.gate.Block(c.Now(), r.limit.key(r, k), rateWindow)
			return connector.RateLimited(ec, msg, s, "OKX answered code %s (%s); retry in %d s", ec, msg, s)
		}
		return upstreamError(status, ec, msg)
	}
}

// send makes one HTTP exchange within the endpoint's request budget.
func (c *client) send(ctx context.Context, h *host, k *keys, r request) (int, []byte, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	key := r.limit.key(r, k)
	wait, blocked := h.gate.Admit(c.Now(), key, r.limit.n)
	if blocked > 0 {
		s := venuekit.Seconds(blocked)
		return 0, nil, connector.RateLimited("", "", s, "OKX rate-limited %s %s; the connector sends nothing there for %d s", r.method, r.path, s)
	}
	if err := venuekit.Pace(ctx, c.Now(), wait, c.Wait, "the OKX request budget of %s is used up for now; retry in %d s", r.path); err != nil {
		return 0, nil, err
	}
	req, err := c.request(ctx, h, k, r)
	if err != nil {
		return 0, nil, err
	}
	ans, err := c.HTTP.Send(ctx, req, r.method+" "+r.path)
	if err != nil {
		return 0, nil, err
	}
	if ans.Status == http.StatusTooManyRequests {
		var env envelope
		_ = json.Unmarshal(ans.Body, &env)
		d := rateWindow
		if s, err := strconv.Atoi(strings.TrimSpace(ans.Header.Get("Retry-After"))); err == nil && s > 0 {
			d = time.Duration(s) * time.Second
		}
		s := h.gate.Block(c.Now(), key, d)
		return 0, nil, connector.RateLimited(string(env.Code), env.Msg, s, "OKX answered HTTP 429 (rate limit) to %s %s; retry in %d s", r.method, r.path, s)
	}
	return ans.Status, ans.Body, nil
}

// request is r with its query, its JSON body (not for GET) and, when
// signed, the OK-ACCESS-* headers over timestamp, method, path with query
// and body.
func (c *client) request(ctx context.Context, h *host, k *keys, r request) (*http.Request, error) {
	requestPath := r.path
	if q := r.query.Encode(); q != "" {
		requestPath += "?" + q
	}
	var body []byte
	if r.method != http.MethodGet && r.body != nil {
		var err error
		if body, err = json.Marshal(r.body); err != nil {
			return nil, err
		}
	}
	req, err := venuekit.NewRequest(ctx, r.method, h.base+requestPath, "", body, "")
	if err != nil {
		return nil, err
	}
	if r.method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.demo {
		req.Header.Set("x-simulated-trading", "1")
	}
	if r.signed {
		ts := timestamp(h.clock.Now())
		req.Header.Set("OK-ACCESS-KEY", k.apiKey)
		req.Header.Set("OK-ACCESS-SIGN", sign(k.secret, ts, r.method, requestPath, string(body)))
		req.Header.Set("OK-ACCESS-TIMESTAMP", ts)
		req.Header.Set("OK-ACCESS-PASSPHRASE", k.passphrase)
		if r.expires {
			req.Header.Set("expTime", strconv.FormatInt(h.clock.Now().Add(c.expTime).UnixMilli(), 10))
		}
	}
	return req, nil
}

// serverTime reads OKX's clock with GET /api/v5/public/time.
func (c *client) serverTime(h *host, demo bool) func(context.Context) (time.Time, error) {
	return func(ctx context.Context) (time.Time, error) {
		var st []struct {
			TS string `json:"ts"`
		}
		if err := c.do(ctx, h.base, nil, request{method: http.MethodGet, path: "/api/v5/public/time", demo: demo, limit: rule{n: 10}}, &st); err != nil {
			return time.Time{}, err
		}
		var ms int64
		if len(st) > 0 {
			ms, _ = strconv.ParseInt(st[0].TS, 10, 64)
		}
		if ms <= 0 {
			return time.Time{}, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "OKX answered /api/v5/public/time without ts")
		}
		return time.UnixMilli(ms), nil
	}
}

// errNoKeys is returned for a credential without apiKey, apiSecret or
// passphrase.
var errNoKeys = errors.New("okx credential lacks apiKey, apiSecret or passphrase")
