package aster

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/aster/sign"
)

// resyncEvery is how old a server-time offset may get before the next
// signed request measures it again.
const resyncEvery = 10 * time.Minute

// maxBody bounds what is read of one Aster answer.
const maxBody = 32 << 20

// client signs and sends Aster REST requests. It keeps, per REST host,
// the offset of Aster's clock from ours (nonces must fall within its
// window) and the request-weight budget.
type client struct {
	http   *http.Client
	now    func() time.Time
	nonces NonceSource
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

// keys are what signs for a credential (fact sheet §2.1): the user (main
// wallet) address, the API wallet's key and its address, the signer, and
// the EIP-712 chain id of the credential's environment.
type keys struct {
	user   string
	signer string
	key    *secp256k1.PrivateKey
	chain  int64
}

// params keep their order: the string signed is exactly the string sent.
type params = connector.Query

// request is one REST call.
type request struct {
	method string
	path   string
	params params
	signed bool // TRADE / USER_DATA / USER_STREAM: nonce, user, signer, signature
	weight int  // IP request weight (fact sheet §11)
}

func newClient(cfg Config, hc *http.Client) *client {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	nonces := cfg.Nonces
	if nonces == nil {
		nonces = NewNonces()
	}
	return &client{
		http:   hc,
		now:    now,
		nonces: nonces,
		wait:   connector.SleepContext,
		hosts:  map[string]*host{},
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

// serverNow is our best estimate of Aster's clock.
func (c *client) serverNow(h *host) time.Time { return h.clock.Now() }

// signedPayload puts nonce, user and signer before the parameters (ccxt's
// order) and returns the string to send, signature last (fact sheet §2.2).
func signedPayload(p params, k *keys, nonce uint64) string {
	msg := params{}.Add("nonce", strconv.FormatUint(nonce, 10)).Add("user", k.user).Add("signer", k.signer)
	q := append(msg, p...).Encode()
	return q + "&signature=" + sign.Sign(k.key, q, k.chain)
}

// do sends r to base and decodes a 200 answer into out (when not nil).
// Aster errors come back as *contract.Error (EXCHANGE_ERROR with a
// reason); a passed deadline as the context's error. A signed request
// refused for its nonce (-1021 ahead of the server, -4225 expired) is
// retried once with a fresh nonce after measuring the clock offset again:
// Aster did not act on it.
func (c *client) do(ctx context.Context, base string, k *keys, r request, out any) error {
	h := c.host(base)
	if r.signed {
		if k == nil {
			return contract.Errorf(contract.CodeInternal, "signed Aster request without keys")
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
					"Aster answered %s %s with an unexpected body", r.method, r.path)
			}
			return nil
		}
		e, ok := errorBody(body)
		if !ok {
			return notJSON(status, r)
		}
		if r.signed && attempt == 0 && (e.Code == -1021 || e.Code == -4225) {
			if err := c.sync(ctx, h); err != nil {
				return err
			}
			continue
		}
		return upstreamError(status, int(e.Code), e.Msg)
	}
}

// apiError is Aster's error body; code may be a number or a string.
type apiError struct {
	Code connector.Int `json:"code"`
	Msg  string        `json:"msg"`
}

// errorBody reads {code, msg}; ok is false when the body is not JSON
// (Aster's HTML error pages, fact sheet §0 #11).
func errorBody(body []byte) (apiError, bool) {
	var e apiError
	return e, json.Unmarshal(body, &e) == nil
}

// notJSON is the error for an answer that is not JSON: a 5xx leaves the
// outcome unknown (the runtime reconciles a placement), never a success.
func notJSON(status int, r request) error {
	return contract.Upstream(fallbackReason(status), "", "",
		"Aster answered %s %s with HTTP %d and a non-JSON page (its backend failed); the request's outcome is unknown: retry shortly (a placement is looked up by its clientOrderId first)",
		r.method, r.path, status)
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
			"Aster rate-limited this IP; the connector sends nothing there for %d s", s)
	}
	if wait > 0 {
		if dl, ok := ctx.Deadline(); ok && c.now().Add(wait).After(dl) {
			s := int((wait + time.Second - 1) / time.Second)
			return 0, nil, connector.RateLimited("", "", s,
				"Aster request weight of this IP is nearly used up this minute; retry in %d s", s)
		}
		if err := c.wait(ctx, wait); err != nil {
			return 0, nil, err
		}
	}
	q := r.params.Encode()
	if r.signed {
		nonce, err := c.nonces.Next(ctx, k.signer, h.clock.Now())
		if err != nil {
			return 0, nil, contract.Errorf(contract.CodeServiceUnavailable, "no nonce for the Aster request: the shared nonce counter (Redis) is unreachable: %v", err)
		}
		q = signedPayload(r.params, k, nonce)
	}
	target := h.base + r.path
	var body io.Reader
	// GET in the query string; POST, PUT and DELETE in the form body (fact
	// sheet §2.2: never split between the two).
	if r.method == http.MethodGet {
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
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, ctx.Err()
		}
		return 0, nil, connector.Unreachable("Aster", r.method+" "+r.path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, ctx.Err()
		}
		return 0, nil, connector.Unreachable("Aster", r.method+" "+r.path, err)
	}
	now := c.serverNow(h)
	h.gate.observe(now, resp.Header)
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusTeapot {
		e, _ := errorBody(raw)
		d := retryAfter(now, resp.StatusCode, resp.Header, e.Msg)
		h.gate.ban(now.Add(d))
		s := int((d + time.Second - 1) / time.Second)
		code := ""
		if e.Code != 0 {
			code = strconv.Itoa(int(e.Code))
		}
		return 0, nil, connector.RateLimited(code, e.Msg, s, "Aster answered HTTP %d (rate limit); retry in %d s", resp.StatusCode, s)
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

// sync measures Aster's clock against ours with GET /fapi/v3/time.
func (c *client) sync(ctx context.Context, h *host) error {
	return h.clock.Measure(ctx, func(ctx context.Context) (time.Time, error) {
		var st struct {
			ServerTime int64 `json:"serverTime"`
		}
		if err := c.do(ctx, h.base, nil, request{method: http.MethodGet, path: "/fapi/v3/time", weight: 1}, &st); err != nil {
			return time.Time{}, err
		}
		if st.ServerTime <= 0 {
			return time.Time{}, contract.Upstream(contract.ReasonUpstreamUnavailable, "", "", "Aster answered /fapi/v3/time without serverTime")
		}
		return time.UnixMilli(st.ServerTime), nil
	})
}
