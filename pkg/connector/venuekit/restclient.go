package venuekit

import (
	"context"
	"net/http"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
)

// Client is what a venue's REST client holds whatever it signs: the
// bounded round trip, the local clock, a wait that tests replace, and
// per-host state (a server clock, budgets) made on first use. A
// connector's client embeds it and adds its signing.
type Client[H any] struct {
	HTTP HTTP
	Now  func() time.Time
	// Wait blocks for d or until ctx ends; tests replace it.
	Wait  func(ctx context.Context, d time.Duration) error
	hosts *Hosts[H]
}

// NewClient is a client of venue over hc; host makes a base's state from
// the base and a server clock kept against now.
func NewClient[H any](venue string, hc *http.Client, now func() time.Time, host func(base string, clock *connector.ServerClock) *H) Client[H] {
	return Client[H]{HTTP: HTTP{Venue: venue, Client: hc}, Now: now, Wait: connector.SleepContext,
		hosts: NewHosts(func(base string) *H { return host(base, connector.NewServerClock(now)) })}
}

// Host is base's state.
func (c *Client[H]) Host(base string) *H { return c.hosts.Get(base) }

// APIKey is the key pair of a venue that signs with an HMAC secret.
type APIKey struct {
	Key, Secret string
}
