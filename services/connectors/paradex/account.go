package paradex

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/shopspring/decimal"
)

var _ connector.AccountFeeder = (*Adapter)(nil)

// accountChannels are the private channels FollowAccount subscribes to
// (AsyncAPI spec of tradeparadex/paradex-docs, fern/apis/prod_ws/asyncapi-2.6.0.yaml):
// orders, fills and funding payments of every market (.ALL, as paradex-py
// and ccxt subscribe orders; for fills and funding_payments UNCONFIRMED),
// positions and account.
var accountChannels = []string{"orders.ALL", "fills.ALL", "funding_payments.ALL", "positions", "account"}

// Stream login errors (https://docs.paradex.trade/ws/general-information/error-handling).
const (
	wsMalformedBearer = 40110
	wsInvalidBearer   = 40111
)

// rpcMessage is any frame of the JSON-RPC 2.0 socket: an answer (id with
// result or error) or a channel message (method subscription).
type rpcMessage struct {
	ID     *int64          `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Method string `json:"method"`
	Params struct {
		Channel string          `json:"channel"`
		Data    json.RawMessage `json:"data"`
	} `json:"params"`
}

// FollowAccount implements connector.AccountFeeder on the websocket the
// public channels use: auth with the credential's JWT (the one the
// connector shares through its token store, Redis across replicas), then
// the account channels. A socket stays authenticated for its lifetime
// (https://docs.paradex.trade/ws/general-information/connection-authentication:
// "you do not need to re-authenticate your WebSocket connection for the
// lifetime of the connection"), so the five-minute JWT is not renewed on
// it. Paradex pings at the protocol level every 55 s; the websocket
// library answers while FollowAccount reads.
func (a *Adapter) FollowAccount(ctx context.Context, c connector.Credential, ready func(), emit func(connector.AccountEvent)) error {
	acct, err := decode(c)
	if err != nil {
		return err
	}
	// The JWT first: a key POST /auth refuses opens no socket.
	if _, err := a.c.token(ctx, a.c.host(a.base(c)), acct, ""); err != nil {
		return err
	}
	s, err := venuekit.DialAccount(ctx, "Paradex", a.cfg.streamURL(c.Environment))
	if err != nil {
		return err
	}
	defer s.Close()
	if err := a.streamLogin(ctx, s, c, acct); err != nil {
		return err
	}
	subs := make([]any, len(accountChannels))
	for i, ch := range accountChannels {
		subs[i] = rpc(int64(i+1), "subscribe", map[string]string{"channel": ch})
	}
	return s.Follow(ctx, subs, ready, func(data []byte) (bool, error) {
		var m rpcMessage
		switch {
		case json.Unmarshal(data, &m) != nil:
		case m.Error != nil:
			return false, contract.Upstream(contract.ReasonUpstreamUnavailable, "", m.Error.Message,
				"Paradex refused an account channel: %s (%d)", m.Error.Message, m.Error.Code)
		case m.ID != nil && m.Result != nil:
			return true, nil
		case m.Method == "subscription":
			if ev, ok := accountEvent(m.Params.Channel, m.Params.Data); ok {
				emit(ev)
			}
		}
		return false, nil
	})
}

// streamLogin sends the auth method with the credential's JWT. A token
// the socket refuses (expired or revoked early) is replaced once with a
// fresh one; a second refusal, or a POST /auth Paradex refuses, is
// AUTHENTICATION_FAILED naming Paradex's reason.
func (a *Adapter) streamLogin(ctx context.Context, s *venuekit.AccountSocket, c connector.Credential, acct *account) error {
	h := a.c.host(a.base(c))
	refused := ""
	var last string
	for attempt := 0; attempt < 2; attempt++ {
		jwt, err := a.c.token(ctx, h, acct, refused)
		if err != nil {
			return err // POST /auth's refusal is AUTHENTICATION_FAILED already
		}
		if err := s.WriteJSON(ctx, rpc(0, "auth", map[string]string{"bearer": jwt})); err != nil {
			return s.Lost(ctx, err)
		}
		m, err := readAnswer(ctx, s, 0)
		if err != nil {
			return s.Lost(ctx, err)
		}
		if m.Error == nil {
			return nil
		}
		last = m.Error.Message + " (" + strconv.Itoa(m.Error.Code) + ")"
		if m.Error.Code != wsMalformedBearer && m.Error.Code != wsInvalidBearer {
			break
		}
		refused = jwt
	}
	return contract.Upstream(contract.ReasonAuthenticationFailed, "", last,
		"Paradex refused the account stream's login of credential %s: %s", c.ID, last)
}

// rpc is a JSON-RPC 2.0 request.
func rpc(id int64, method string, params any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": id}
}

// readAnswer reads until the answer to id, within 10 s.
func readAnswer(ctx context.Context, s *venuekit.AccountSocket, id int64) (rpcMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		_, data, err := s.Read(ctx)
		if err != nil {
			return rpcMessage{}, err
		}
		var m rpcMessage
		if json.Unmarshal(data, &m) == nil && m.ID != nil && *m.ID == id {
			return m, nil
		}
	}
}

// accountEvent normalizes one private channel message; the payloads are
// the REST models, read as REST reads them.
func accountEvent(channel string, data json.RawMessage) (connector.AccountEvent, bool) {
	prefix, _, _ := strings.Cut(channel, ".")
	switch prefix {
	case "orders":
		var o wsOrder
		if json.Unmarshal(data, &o) != nil {
			return connector.AccountEvent{}, false
		}
		return connector.AccountEvent{Time: ms(o.LastUpdatedAt), Data: orderEvent(o)}, true
	case "fills":
		var f fillResp
		if json.Unmarshal(data, &f) != nil || f.FillType == "TRANSFER" || f.FillType == "SETTLE_MARKET" {
			return connector.AccountEvent{}, false // not trades, as getFills leaves them out
		}
		return connector.AccountEvent{Time: ms(f.CreatedAt), Data: fillEvent(f)}, true
	case "positions":
		var p wsPosition
		if json.Unmarshal(data, &p) != nil {
			return connector.AccountEvent{}, false
		}
		return connector.AccountEvent{Time: ms(p.LastUpdatedAt), Data: positionEvent(p)}, true
	case "account":
		var r wsAccount
		if json.Unmarshal(data, &r) != nil {
			return connector.AccountEvent{}, false
		}
		asset := r.SettlementAsset
		if asset == "" {
			asset = "USDC"
		}
		return connector.AccountEvent{Time: ms(r.UpdatedAt), Data: contract.BalanceEvent{Asset: asset,
			Equity: venuekit.Given(r.AccountValue), FreeCollateral: venuekit.Given(r.FreeCollateral), WalletBalance: venuekit.Given(r.TotalCollateral)}}, true
	case "funding_payments":
		var p struct {
			Market    string        `json:"market"`
			Payment   dec           `json:"payment"` // signed: negative when paid
			CreatedAt connector.Int `json:"created_at"`
		}
		if json.Unmarshal(data, &p) != nil || !p.Payment.Given {
			return connector.AccountEvent{}, false
		}
		// Paradex gives neither the rate nor the position size.
		return connector.AccountEvent{Time: ms(p.CreatedAt), Data: contract.FundingEvent{Market: p.Market, Amount: p.Payment.D()}}, true
	}
	return connector.AccountEvent{}, false
}

func ms(t connector.Int) time.Time { return time.UnixMilli(int64(t)) }

type wsOrder struct {
	orderResp
	LastUpdatedAt connector.Int `json:"last_updated_at"`
}

type wsPosition struct {
	positionResp
	LiquidationPrice dec           `json:"liquidation_price"`
	LastUpdatedAt    connector.Int `json:"last_updated_at"`
}

type wsAccount struct {
	accountResp
	SettlementAsset string        `json:"settlement_asset"`
	UpdatedAt       connector.Int `json:"updated_at"`
}

// orderEvent: status as REST maps it; price only for priced types;
// avgPrice when something filled; reason the venue's cancel_reason when
// the order was not simply cancelled by its owner or filled (a post-only
// refusal is post_only_would_take, as on every venue).
func orderEvent(w wsOrder) contract.OrderEvent {
	o := orderFromWire(w.orderResp)
	ev := venuekit.OrderEvent(o)
	ev.Price = venuekit.Positive(w.Price.D())
	if w.AvgFillPrice.Given && o.FilledSize.IsPositive() {
		ev.AvgPrice = venuekit.Positive(w.AvgFillPrice.D())
	}
	if r := w.CancelReason; r != "" && r != "USER_CANCELED" && o.Status != contract.StatusFilled {
		ev.Reason = r
		if r == "POST_ONLY_WOULD_CROSS" { // the name every venue's post-only refusal has (DESIGN §13)
			ev.Reason = "post_only_would_take"
		}
	}
	return ev
}

func fillEvent(f fillResp) contract.FillEvent {
	ev := venuekit.FillEvent(fillFromWire(f), f.FeeCurrency, f.Liquidity)
	ev.ClientOrderID = f.ClientID
	return ev
}

// positionEvent: a CLOSED or empty position is FLAT; leverage and the
// liquidation price only when Paradex gave them.
func positionEvent(p wsPosition) contract.PositionEvent {
	if p.Status == "CLOSED" || p.Size.D().IsZero() {
		return venuekit.FlatEvent(p.Market)
	}
	return venuekit.PositionEvent(positionFromWire(p.positionResp, decimal.Zero), venuekit.Given(p.UnrealizedPnl),
		venuekit.Positive(p.LiquidationPrice.D()))
}
