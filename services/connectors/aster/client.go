package aster

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/aster/sign"
)

// client signs and sends Aster REST requests. It keeps, per REST host,
// the offset of Aster's clock from ours (nonces must fall within a window
// of it) and the request-weight budget.
type client struct {
	http   venuekit.HTTP
	now    func() time.Time
	nonces venuekit.ClockedNonces
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

// defaultWeightLimit is the weight a minute per IP unless exchangeInfo
// says otherwise (fact sheet §10).
const defaultWeightLimit = 2400

func newClient(cfg Config, hc *http.Client) *client {
	now := cfg.Clock()
	nonces := cfg.Nonces
	if nonces == nil {
		nonces = NewNonces()
	}
	return &client{
		http:   venuekit.HTTP{Venue: "Aster", Client: hc},
		now:    now,
		nonces: nonces,
		wait:   connector.SleepContext,
		hosts: venuekit.NewHosts(func(base string) *host {
			return &host{base: base, gate: venuekit.NewWeightGate("X-MBX-USED-WEIGHT-1M", defaultWeightLimit), clock: connector.NewServerClock(now)}
		}),
	}
}

func (c *client) host(base string) *host { return c.hosts.Get(base) }

// signedPayload puts nonce, user and signer before the parameters (ccxt's
// order) and returns the string to send, signature last (fact sheet §2.2).
func signedPayload(p params, k *keys, nonce uint64) string {
	msg := params{}.Add("nonce", strconv.FormatUint(nonce, 10)).Add("user", k.user).Add("signer", k.signer)
	q := append(msg, p...).Encode()
	return q + "&signature=" + sign.Sign(k.key, q, k.chain)
}

// do sends r to base and decodes a 200 answer into out (fapi.Host.Do); a
// signed request refused for its nonce (-1021 ahead of the server, -4225 stale or repeated) is retried once.
func (c *client) do(ctx context.Context, base string, k *keys, r request, out any) error {
	h := c.host(base)
	if r.signed && k == nil {
		return contract.Errorf(contract.CodeInternal, "signed Aster request without keys")
	}
	return fapi.Host{Gate: h.gate, Clock: h.clock}.Do(ctx, venueErrors, fapi.Call{Method: r.method, Path: r.path,
		Signed: r.signed, Stale: []int{-1021, -4225}, Time: c.serverTime(h), NotJSON: func(status int) error { return notJSON(status, r) },
		Send: func() (int, []byte, error) { return c.send(ctx, h, k, r) }}, out)
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
	return fapi.Host{Gate: h.gate, Clock: h.clock}.Send(ctx, &c.http, c.now, c.wait, r.weight, r.method+" "+r.path,
		func() (*http.Request, error) { return c.request(ctx, h, k, r) })
}

// request is r, signed when it must be with a nonce at the host's clock:
// GET carries the parameters in the query, POST, PUT and DELETE in a form
// body (fact sheet §2.2: never split between the two).
func (c *client) request(ctx context.Context, h *host, k *keys, r request) (*http.Request, error) {
	q := r.params.Encode()
	if r.signed {
		nonce, err := c.nonces.NextAt(ctx, k.signer, h.clock.Now())
		if err != nil {
			return nil, contract.Errorf(contract.CodeServiceUnavailable,
				"no nonce for the Aster request: the shared nonce counter (Redis) is unreachable: %v", err)
		}
		q = signedPayload(r.params, k, nonce)
	}
	if r.method == http.MethodGet {
		return venuekit.NewRequest(ctx, r.method, h.base+r.path, q, nil, "")
	}
	return venuekit.NewRequest(ctx, r.method, h.base+r.path, "", []byte(q), "application/x-www-form-urlencoded")
}

// serverTime reads Aster's clock with GET /fapi/v3/time.
func (c *client) serverTime(h *host) func(context.Context) (time.Time, error) {
	return fapi.ServerTime("Aster", "/fapi/v3/time", func(ctx context.Context, out any) error {
		return c.do(ctx, h.base, nil, request{method: http.MethodGet, path: "/fapi/v3/time", weight: 1}, out)
	})
}
