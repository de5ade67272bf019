package bybit

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// ipCoolDown is how long nothing is sent to a host after HTTP 403: Bybit's
// IP limit (600 requests in 5 s) blocks for at least ten minutes (rate
// limit page).
const ipCoolDown = 10 * time.Minute

// client signs and sends Bybit v5 REST requests. Per REST host it keeps
// the offset of Bybit's clock and an IP block; per API key and path the
// quota Bybit last reported.
type client struct {
	venuekit.Client[host]
	recvWindow int64           // milliseconds
	quotas     venuekit.Quotas // by host + apiKey + path, on Bybit's clock
}

// host is what the client knows about one REST base URL.
type host struct {
	base  string
	clock *connector.ServerClock
	ban   venuekit.Ban // local time
}

// keys are a credential's API key and secret.
type keys = venuekit.APIKey

// params keep their order: the string signed is exactly the string sent.
type params = connector.Query

// request is one REST call: GETs carry query, POSTs a JSON body.
type request struct {
	method, path string
	query        params
	body         any
	signed       bool
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
	return &client{Client: venuekit.NewClient("Bybit", hc, cfg.Clock(), func(base string, clock *connector.ServerClock) *host {
		return &host{base: base, clock: clock}
	}), recvWindow: cfg.RecvWindow.Milliseconds()}
}

// sign is HMAC-SHA256 of timestamp + apiKey + recvWindow + payload under
// secret, in lower-case hex (guide: "Authentication").
func sign(secret string, timestampMs int64, apiKey string, recvWindowMs int64, payload string) string {
	return hex.EncodeToString(venuekit.HMACSHA256(secret, strconv.FormatInt(timestampMs, 10)+apiKey+strconv.FormatInt(recvWindowMs, 10)+payload))
}

// do sends r to base and decodes a successful answer's result into out
// (when not nil). A request Bybit refused for its timestamp (10002) is
// retried once after measuring the clock again: Bybit did not act on it.
func (c *client) do(ctx context.Context, base string, k *keys, r request, out any) (envelope, error) {
	h := c.Host(base)
	if r.signed {
		if k == nil {
			return envelope{}, contract.Errorf(contract.CodeInternal, "signed Bybit request without keys")
		}
		if err := venuekit.Synced(ctx, h.clock, c.serverTime(h)); err != nil {
			return envelope{}, err
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
			if err := h.clock.Measure(ctx, c.serverTime(h)); err != nil {
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
	if key := quotaKey(h, k, r.path); key != "" {
		if d := c.quotas.Spent(key, h.clock.Now()); d > 0 {
			wait = d
		}
	}
	s := venuekit.Seconds(wait)
	return connector.RateLimited("10006", env.RetMsg, s, "Bybit refused %s: too many requests for this API key (retCode 10006); retry in %d s", r.path, s)
}

// quotaKey names the per-UID quota a signed request draws on; "" for
// public requests, which only the IP limit bounds.
func quotaKey(h *host, k *keys, path string) string {
	if k == nil {
		return ""
	}
	return h.base + " " + k.Key + " " + path
}

// admit waits until the endpoint's quota has room again when Bybit said it
// is used up, so the connector slows down before Bybit refuses; a wait
// past the caller's deadline is answered at once as rate-limited.
func (c *client) admit(ctx context.Context, h *host, k *keys, path string) error {
	if blocked := h.ban.Left(c.Now()); blocked > 0 {
		s := venuekit.Seconds(blocked)
		return connector.RateLimited("403", "", s, "Bybit blocked this IP (HTTP 403); the connector sends nothing there for %d s", s)
	}
	key := quotaKey(h, k, path)
	if key == "" {
		return nil
	}
	return venuekit.Pace(ctx, c.Now(), c.quotas.Wait(key, h.clock.Now()), c.Wait,
		"Bybit's quota for %s on this API key is used up; retry in %d s", path)
}

// send makes one HTTP exchange and decodes the envelope.
func (c *client) send(ctx context.Context, h *host, k *keys, r request) (envelope, error) {
	if err := ctx.Err(); err != nil {
		return envelope{}, err
	}
	if err := c.admit(ctx, h, k, r.path); err != nil {
		return envelope{}, err
	}
	req, err := c.request(ctx, h, k, r)
	if err != nil {
		return envelope{}, err
	}
	ans, err := c.HTTP.Send(ctx, req, r.method+" "+r.path)
	if err != nil {
		return envelope{}, err
	}
	if key := quotaKey(h, k, r.path); key != "" {
		c.quotas.Observe(key, ans.Header, "X-Bapi-Limit-Status", "X-Bapi-Limit-Reset-Timestamp")
	}
	switch {
	case ans.Status == http.StatusForbidden:
		h.ban.Until(c.Now().Add(ipCoolDown))
		return envelope{}, connector.RateLimited("403", "", int(ipCoolDown/time.Second),
			"Bybit answered HTTP 403: this IP went over 600 requests in 5 s (or its region is blocked); the connector sends nothing there for 10 minutes")
	case ans.Status == http.StatusTooManyRequests:
		return envelope{}, connector.RateLimited("429", "", 1, "Bybit answered HTTP 429 (system protection); retry in a second")
	case ans.Status != http.StatusOK:
		return envelope{}, httpError(ans.Status, r)
	}
	var env envelope
	if err := json.Unmarshal(ans.Body, &env); err != nil {
		return envelope{}, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "",
			"Bybit answered %s %s with a body that is not its JSON envelope", r.method, r.path)
	}
	return env, nil
}

// request is r with its query, its JSON body (POST) and, when signed, the
// X-BAPI-* headers over the payload: the body of a POST, else the query.
func (c *client) request(ctx context.Context, h *host, k *keys, r request) (*http.Request, error) {
	query, payload := r.query.Encode(), ""
	var body []byte
	if r.method == http.MethodPost {
		var err error
		if body, err = json.Marshal(r.body); err != nil {
			return nil, err
		}
		payload = string(body)
	} else {
		payload = query
	}
	req, err := venuekit.NewRequest(ctx, r.method, h.base+r.path, query, body, "")
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if r.signed {
		ts := h.clock.Now().UnixMilli()
		req.Header.Set("X-BAPI-API-KEY", k.Key)
		req.Header.Set("X-BAPI-TIMESTAMP", strconv.FormatInt(ts, 10))
		req.Header.Set("X-BAPI-RECV-WINDOW", strconv.FormatInt(c.recvWindow, 10))
		req.Header.Set("X-BAPI-SIGN", sign(k.Secret, ts, k.Key, c.recvWindow, payload))
	}
	return req, nil
}

// serverTime reads Bybit's clock with GET /v5/market/time.
func (c *client) serverTime(h *host) func(context.Context) (time.Time, error) {
	return func(ctx context.Context) (time.Time, error) {
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
	}
}
