package paradex

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
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

func ms(t connector.Int) time.Time { return time.UnixMilli(int64(t)) }
