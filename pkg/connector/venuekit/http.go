package venuekit

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
)

// MaxBody bounds what is read of one answer unless HTTP says otherwise
// (Paradex's /markets/summary?market=ALL is about 1.6 MB).
const MaxBody = 32 << 20

// ResyncEvery is how old a server-time offset may get before the next
// signed request measures it again.
const ResyncEvery = 10 * time.Minute

// HTTP makes one bounded round trip to a venue.
type HTTP struct {
	Venue   string // names the venue in errors: "Binance"
	Client  *http.Client
	MaxBody int64 // 0 means MaxBody
	// Record, when set, sees every request just before it is sent; tests
	// use it to check what went out.
	Record func(*http.Request)
}

// Answer is a venue's HTTP answer, read in full.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Send sends req and reads the answer. A transport failure is
// UPSTREAM_UNAVAILABLE naming what (a method and path, never the signed
// URL); a passed deadline is the context's error.
func (h *HTTP) Send(ctx context.Context, req *http.Request, what string) (Answer, error) {
	if h.Record != nil {
		h.Record(req)
	}
	resp, err := h.Client.Do(req)
	if err != nil {
		return Answer{}, h.failed(ctx, what, err)
	}
	defer resp.Body.Close()
	limit := h.MaxBody
	if limit <= 0 {
		limit = MaxBody
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return Answer{}, h.failed(ctx, what, err)
	}
	return Answer{Status: resp.StatusCode, Header: resp.Header, Body: raw}, nil
}

func (h *HTTP) failed(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return connector.Unreachable(h.Venue, what, err)
}

// NewRequest is a request to target with query (when not empty) after a
// "?", and body (when not nil) sent as contentType.
func NewRequest(ctx context.Context, method, target, query string, body []byte, contentType string) (*http.Request, error) {
	if query != "" {
		target += "?" + query
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, r)
	if err == nil && body != nil && contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req, err
}

// Hosts keeps what a client knows per REST base (its clock offset, its
// budgets), made on first use.
type Hosts[T any] struct {
	mu   sync.Mutex
	m    map[string]*T
	make func(base string) *T
}

// NewHosts makes each host's state with make.
func NewHosts[T any](make func(base string) *T) *Hosts[T] {
	return &Hosts[T]{m: map[string]*T{}, make: make}
}

// Get is base's state.
func (h *Hosts[T]) Get(base string) *T {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.m[base]
	if t == nil {
		t = h.make(base)
		h.m[base] = t
	}
	return t
}

// Synced measures clock with fetch when it never was or is older than
// ResyncEvery.
func Synced(ctx context.Context, clock *connector.ServerClock, fetch func(context.Context) (time.Time, error)) error {
	if clock.Fresh(ResyncEvery) {
		return nil
	}
	return clock.Measure(ctx, fetch)
}
