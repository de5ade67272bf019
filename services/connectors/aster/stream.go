package aster

import (
	"context"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Account events come from the listen-key user data stream (fact sheet
// §12.2): POST /fapi/v3/listenKey (signed like any request) gives the key,
// wss://<stream host>/ws/<listenKey> streams ORDER_TRADE_UPDATE and
// ACCOUNT_UPDATE, and PUT /fapi/v3/listenKey keeps the key alive (60 min
// without it).

var (
	_ connector.Streamer      = (*Adapter)(nil)
	_ connector.AccountFeeder = (*Adapter)(nil)
)

// keepAliveEvery is how often the listen key is extended: well inside
// its 60 minutes.
var keepAliveEvery = 30 * time.Minute

// userEvents reads Aster's frames: its stop orders are regular orders,
// its fee sign is unconfirmed (fact sheet §4), and a FUNDING_FEE update is
// the payment alone. Aster pushes no available balance (issue #115), so
// balance events hold the wallet balance only.
var userEvents = fapi.Events{Venue: "Aster", Stops: true, AbsFee: true, FundingOnly: true}

// FollowAccount implements connector.AccountFeeder. A credential Aster
// refuses fails the listen-key request with AUTHENTICATION_FAILED (-2015,
// -1022); the socket opening on the key is the subscription's
// confirmation. It returns when ctx ends, the socket drops, the key
// expires or a keep-alive fails.
func (a *Adapter) FollowAccount(ctx context.Context, c connector.Credential, ready func(), emit func(connector.AccountEvent)) error {
	k, err := credKeys(c)
	if err != nil {
		return contract.Upstream(contract.ReasonAuthenticationFailed, "", "", "the stored Aster secret is not usable (userAddress, signerPrivateKey): replace the credential")
	}
	return fapi.UserStream{Venue: "Aster", URL: func(key string) string { return a.cfg.StreamURL(c.Environment) + "/ws/" + key },
		Listen: func(ctx context.Context, method string) (string, error) {
			return fapi.ListenKey("Aster", prefix+"/listenKey", method, func(out any) error {
				return a.c.Do(ctx, a.c.Base(c), k, fapi.Request{Method: method, Path: prefix + "/listenKey", Signed: true, Weight: 1}, out)
			})
		},
		Every: keepAliveEvery, Frame: userEvents.Emit(emit)}.Follow(ctx, ready)
}

// DialStream implements connector.Streamer. Aster serves every market
// stream on one host in combined mode (/stream, fact sheet §12.1): one
// socket carries mark price and book. Aster pings every 5 min.
func (a *Adapter) DialStream(ctx context.Context, env contract.Environment) (connector.StreamConn, error) {
	return fapi.DialStream(ctx, "Aster", fapi.Route{URL: a.cfg.StreamURL(env) + "/stream", Streams: []string{fapi.MarkStream, fapi.DepthStream}})
}

// MaxStreamMarkets implements connector.StreamCapacity: Aster allows 200
// streams per connection (fact sheet §12.1), two per market.
func (a *Adapter) MaxStreamMarkets() int { return 100 }
