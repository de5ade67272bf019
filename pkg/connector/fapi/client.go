package fapi

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Client sends a venue's REST requests, signed by its Build. It keeps per
// REST host the venue's clock, the request-weight budget and the last
// Markets answer; K is the venue's keys.
type Client[K any] struct {
	HTTP venuekit.HTTP
	Now  func() time.Time
	// Wait blocks for d or until ctx ends; tests replace it.
	Wait    func(ctx context.Context, d time.Duration) error
	Errors  Errors
	Prefix  string // of the time and exchangeInfo paths: /fapi/v1 or /fapi/v3
	Stale   []int  // codes refusing a signed request's timestamp or nonce: retried once
	NotJSON bool   // an error answer that is not JSON leaves the outcome unknown (Aster)
	Keys    func(connector.Credential) (K, error)
	Base    func(connector.Credential) string
	// Build makes r's HTTP request to s, signed with k when r.Signed.
	Build func(ctx context.Context, s *Server, k K, r Request) (*http.Request, error)
	Lists venuekit.Catalog[SymbolMeta] // by REST base: markets and their market-order rules

	once  sync.Once
	hosts *venuekit.Hosts[Server]
}

// Server is what the client knows about one REST base URL.
type Server struct {
	URL string
	Host
}

// Request is one REST call.
type Request struct {
	Method string
	Path   string
	Params connector.Query // in order: the string signed is exactly the string sent
	Signed bool            // TRADE / USER_DATA
	Weight int             // IP request weight
}

// defaultWeightLimit is the weight a minute per IP unless exchangeInfo
// says otherwise (both venues' fact sheets §10).
const defaultWeightLimit = 2400

// Host is base's state.
func (cl *Client[K]) Host(base string) *Server {
	cl.once.Do(func() {
		cl.hosts = venuekit.NewHosts(func(base string) *Server {
			return &Server{URL: base, Host: Host{Gate: venuekit.NewWeightGate("X-MBX-USED-WEIGHT-1M", defaultWeightLimit), Clock: connector.NewServerClock(cl.Now)}}
		})
	})
	return cl.hosts.Get(base)
}

// Do sends r to base and decodes a 200 answer into out (Host.Do).
func (cl *Client[K]) Do(ctx context.Context, base string, k K, r Request, out any) error {
	s := cl.Host(base)
	call := Call{Method: r.Method, Path: r.Path, Signed: r.Signed, Stale: cl.Stale, Time: cl.serverTime(s),
		Send: func() (int, []byte, error) {
			return s.Send(ctx, &cl.HTTP, cl.Now, cl.Wait, r.Weight, r.Method+" "+r.Path,
				func() (*http.Request, error) { return cl.Build(ctx, s, k, r) })
		}}
	if cl.NotJSON {
		call.NotJSON = func(status int) error {
			return contract.Upstream(FallbackReason(status), "", "",
				"%s answered %s %s with HTTP %d and a non-JSON page (its backend failed); the request's outcome is unknown: retry shortly (a placement is looked up by its clientOrderId first)",
				cl.HTTP.Venue, r.Method, r.Path, status)
		}
	}
	return s.Do(ctx, cl.Errors, call, out)
}

// serverTime reads the venue's clock with GET <prefix>/time.
func (cl *Client[K]) serverTime(s *Server) func(context.Context) (time.Time, error) {
	path := cl.Prefix + "/time"
	return ServerTime(cl.HTTP.Venue, path, func(ctx context.Context, out any) error {
		var none K
		return cl.Do(ctx, s.URL, none, Request{Method: http.MethodGet, Path: path, Weight: 1}, out)
	})
}

// Public calls an unsigned market-data endpoint.
func (cl *Client[K]) Public(ctx context.Context, c connector.Credential, path string, p connector.Query, weight int, out any) error {
	var none K
	return cl.Do(ctx, cl.Base(c), none, Request{Method: http.MethodGet, Path: path, Params: p, Weight: weight}, out)
}

// Signed calls a TRADE or USER_DATA endpoint with the credential's keys.
func (cl *Client[K]) Signed(ctx context.Context, c connector.Credential, method, path string, p connector.Query, weight int, out any) error {
	k, err := cl.Keys(c)
	if err != nil {
		return err
	}
	return cl.Do(ctx, cl.Base(c), k, Request{Method: method, Path: path, Params: p, Signed: true, Weight: weight}, out)
}

// Markets implements connector.Adapter: the USDT perpetuals of
// exchangeInfo with their filters. It also takes the weight limit.
func (cl *Client[K]) Markets(ctx context.Context, c connector.Credential) ([]connector.Market, error) {
	var info ExchangeInfo
	if err := cl.Public(ctx, c, cl.Prefix+"/exchangeInfo", nil, 1, &info); err != nil {
		return nil, err
	}
	list, meta := Markets(info, Quote)
	base := cl.Base(c)
	cl.Host(base).Gate.SetLimit(WeightLimit(info))
	cl.Lists.Put(base, list, meta)
	return list, nil
}

// MarketList is the credential's host's last Markets answer, read once.
func (cl *Client[K]) MarketList(ctx context.Context, c connector.Credential) ([]connector.Market, error) {
	return cl.Lists.Get(ctx, cl.Base(c), func(ctx context.Context) ([]connector.Market, error) { return cl.Markets(ctx, c) })
}

// Meta is a symbol's market-order rules from the last Markets answer.
func (cl *Client[K]) Meta(c connector.Credential, native string) SymbolMeta {
	m, _ := cl.Lists.Rules(cl.Base(c), native)
	return m
}

// Quote is the only quote asset the connectors list: USDT-margined
// perpetuals.
const Quote = "USDT"

// FormRequest is r's HTTP request to s with its encoded parameters q:
// in the query for GET (and DELETE when deleteInQuery), else in a form body.
func FormRequest(ctx context.Context, s *Server, r Request, q string, deleteInQuery bool) (*http.Request, error) {
	if r.Method == http.MethodGet || (deleteInQuery && r.Method == http.MethodDelete) {
		return venuekit.NewRequest(ctx, r.Method, s.URL+r.Path, q, nil, "")
	}
	return venuekit.NewRequest(ctx, r.Method, s.URL+r.Path, "", []byte(q), "application/x-www-form-urlencoded")
}
