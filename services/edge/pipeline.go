package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/perpgate/perpgate/pkg/apikey"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/ratelimit"
	"github.com/perpgate/perpgate/pkg/telemetry"
)

// authenticate is step 3: the key's format, existence, revocation and expiry.
func (s *Server) authenticate(ctx context.Context, raw string) (contract.KeyInfo, *contract.Error) {
	if raw == "" {
		return contract.KeyInfo{}, contract.Errorf(contract.CodeMissingAPIKey,
			"no API key: send it in the X-API-Key header or as Authorization: Bearer <key>")
	}
	if _, err := apikey.Parse(raw); err != nil {
		return contract.KeyInfo{}, contract.Errorf(contract.CodeInvalidKeyFormat,
			"API keys start with mt_live_ or mt_test_")
	}
	if !apikey.WellFormed(raw) {
		return contract.KeyInfo{}, contract.Errorf(contract.CodeInvalidAPIKey, "API key not recognized")
	}
	key, err := s.dir.key(ctx, apikey.Hash(raw))
	if err != nil {
		var ce *contract.Error
		if errors.As(err, &ce) && ce.Code == contract.CodeInvalidAPIKey {
			return key, ce
		}
		return key, s.lookupFailed(ctx, "API keys cannot be checked", err)
	}
	now := s.now()
	switch {
	case key.RevokedAt != nil:
		return key, contract.Errorf(contract.CodeKeyRevoked, "API key %s was revoked; create a new one", key.Display)
	case key.ExpiresAt != nil && !now.Before(*key.ExpiresAt):
		return key, contract.Errorf(contract.CodeKeyExpired, "API key %s expired at %s; create a new one",
			key.Display, key.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return key, nil
}

// rateLimit is step 4; it sets the X-RateLimit-* headers on every outcome.
func (s *Server) rateLimit(ctx context.Context, h http.Header, key contract.KeyInfo) *contract.Error {
	lim, ok := s.cfg.TierLimits[key.Tier]
	if !ok {
		lim = key.Tier.Limits()
	}
	d, err := s.limiter.Allow(ctx, key.ID, ratelimit.Limits{PerMinute: lim.PerMinute, PerDay: lim.PerDay})
	if err != nil {
		return s.unavailable(ctx, "rate limiter", err,
			"the rate limiter's store (Redis) is not answering, so requests cannot be counted; retry shortly")
	}
	setLimitHeaders(h, d)
	if !d.Allowed {
		if s.metrics != nil {
			s.metrics.RateLimited.WithLabelValues(string(key.Tier)).Inc()
		}
		secs := int((d.RetryAfter + time.Second - 1) / time.Second)
		ce := contract.Errorf(contract.CodeRateLimited,
			"rate limit of the %s tier exceeded; retry in %d seconds", key.Tier, secs)
		ce.RetryAfterSeconds = secs
		return ce
	}
	return nil
}

// execute runs steps 6 to 10 for an authenticated, rate-limited request:
// tier and scope, credential, parameters, routing. It returns the result
// object and the exchange it went to. The MCP front end calls it too.
// beforeRoute, when set, runs once the call is validated and about to be
// routed; an error from it stops the call (the audit trail uses it).
func (s *Server) execute(ctx context.Context, requestID string, key contract.KeyInfo, op *contract.Operation,
	fields map[string]json.RawMessage, beforeRoute func(contract.CredentialInfo, json.RawMessage) *contract.Error) (json.RawMessage, contract.Exchange, *contract.Error) {
	if !key.Tier.AtLeast(op.MinTier) {
		return nil, "", contract.Errorf(contract.CodeTierInsufficient,
			"%s needs the %s tier or above; this key's account is on %s", op.Name, op.MinTier, key.Tier)
	}
	if len(key.AllowedOperations) > 0 && !slices.Contains(key.AllowedOperations, op.Name) {
		return nil, "", contract.Errorf(contract.CodeOperationNotAllowed, "this API key may not call %s", op.Name)
	}
	if key.ReadOnly && !op.ReadOnly {
		return nil, "", contract.Errorf(contract.CodeKeyReadOnly,
			"API key %s is read-only (guard readOnly): it may not call %s; use a key without that guard", key.Display, op.Name)
	}
	cred, ce := s.target(ctx, key, op, fields)
	if ce != nil {
		return nil, "", ce
	}
	delete(fields, "credentialId")
	params, ce := op.DecodeParams(fields)
	if ce != nil {
		return nil, cred.Exchange, ce
	}
	if ce := checkLeverage(key, params); ce != nil {
		return nil, cred.Exchange, ce
	}
	clientID := assignClientOrderIDs(params)
	req := contract.ConnectorRequest{
		RequestID: requestID, Operation: op.Name, AccountID: key.AccountID, Credential: cred, Params: mustJSON(params),
	}
	if key.Guards.Trading() {
		g := key.Guards
		req.KeyID, req.Guards = key.ID, &g
	}
	if beforeRoute != nil {
		if ce := beforeRoute(cred, req.Params); ce != nil {
			return nil, cred.Exchange, ce
		}
	}
	if op.AtEdge {
		result, ce := s.serveAtEdge(ctx, key, cred, op, params)
		return result, cred.Exchange, ce
	}
	var result json.RawMessage
	request := bus.RequestConnector
	if !op.ReadOnly { // its outcome is heard of as soon as the bus is back
		request = bus.RequestConnectorWatched
	}
	if err := request(ctx, s.nc, s.subjects.Operation(cred.Exchange, op), req, &result); err != nil {
		return nil, cred.Exchange, s.routeError(ctx, op, cred.Exchange, clientID, err)
	}
	return result, cred.Exchange, nil
}

// checkLeverage applies the key's maxLeverage guard to setLeverage.
func checkLeverage(key contract.KeyInfo, params any) *contract.Error {
	p, ok := params.(*contract.LeverageParams)
	if !ok || key.MaxLeverage == 0 || p.Leverage <= key.MaxLeverage {
		return nil
	}
	return contract.Errorf(contract.CodeLeverageExceeded,
		"leverage %d is above this key's maxLeverage of %d; ask for %d or less", p.Leverage, key.MaxLeverage, key.MaxLeverage)
}

// canonicalCredentialID rewrites a credentialId UUID in its canonical
// lower-case spelling as the call enters (/v1 and MCP alike), so
// allowedCredentials, the credential cache, the connector's idempotency
// records and the audit trail all see one spelling of one credential.
func canonicalCredentialID(fields map[string]json.RawMessage) {
	id, ok := contract.JSONString(fields["credentialId"])
	if !ok || len(id) != 36 {
		return
	}
	if u, err := uuid.Parse(id); err == nil && u.String() != id {
		fields["credentialId"] = mustJSON(u.String())
	}
}

// credential is step 7.
func (s *Server) credential(ctx context.Context, key contract.KeyInfo, fields map[string]json.RawMessage) (contract.CredentialInfo, *contract.Error) {
	var id string
	raw, ok := fields["credentialId"]
	if ok {
		id, ok = contract.JSONString(raw)
	}
	if !ok || id == "" {
		return contract.CredentialInfo{}, contract.Errorf(contract.CodeInvalidRequest,
			"field \"credentialId\" is required: the UUID of an exchange credential")
	}
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return contract.CredentialInfo{}, contract.Errorf(contract.CodeInvalidRequest,
			"field \"credentialId\" must be a UUID such as 0b0e5b1e-6a55-4a4c-9d0e-1f6f0c3c2a11")
	}
	if len(key.AllowedCredentials) > 0 && !slices.Contains(key.AllowedCredentials, id) {
		return contract.CredentialInfo{}, contract.Errorf(contract.CodeCredentialNotAllowed,
			"this API key may not use credential %s", id)
	}
	cred, err := s.dir.credential(ctx, id)
	if err != nil {
		var ce *contract.Error
		if errors.As(err, &ce) && ce.Code == contract.CodeCredentialNotFound {
			return cred, contract.Errorf(contract.CodeCredentialNotFound, "credential %s not found", id)
		}
		return cred, s.lookupFailed(ctx, "credentials cannot be checked", err)
	}
	if cred.AccountID != key.AccountID {
		return contract.CredentialInfo{}, contract.Errorf(contract.CodeCredentialNotFound, "credential %s not found", id)
	}
	if !cred.Environment.Matches(key.Env) {
		return cred, contract.Errorf(contract.CodeEnvironmentMismatch,
			"a %s key cannot use a %s credential: use an mt_%s_ key", key.Env, cred.Environment, envKeyFor(cred.Environment))
	}
	if len(key.AllowedExchanges) > 0 && !slices.Contains(key.AllowedExchanges, cred.Exchange) {
		return cred, contract.Errorf(contract.CodeExchangeNotAllowed, "this API key may not use exchange %s", cred.Exchange)
	}
	return cred, nil
}

func envKeyFor(e contract.Environment) contract.KeyEnv {
	if e == contract.Mainnet {
		return contract.KeyEnvLive
	}
	return contract.KeyEnvTest
}

// assignClientOrderIDs gives every order of a placement a clientOrderId, so
// a timeout can tell the client which id to look up. It returns the first.
func assignClientOrderIDs(params any) string {
	set := func(id *string) string {
		if *id == "" {
			*id = uuid.NewString()
		}
		return *id
	}
	switch p := params.(type) {
	case *contract.LimitOrderParams:
		return set(&p.ClientOrderID)
	case *contract.MarketOrderParams:
		return set(&p.ClientOrderID)
	case *contract.StopOrderParams:
		return set(&p.ClientOrderID)
	case *contract.ProtectionParams:
		if p.ClientOrderID == "" {
			p.ClientOrderID = uuid.NewString()[:32]
		}
		return p.ClientOrderID
	case *contract.BatchOrderParams:
		var first string
		for i := range p.Orders {
			id := set(&p.Orders[i].ClientOrderID)
			if i == 0 {
				first = id
			}
		}
		return first
	}
	return ""
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v) // parameter structs always encode
	return b
}

// routeError is steps 9 and 10: what the bus said, as the client's error.
func (s *Server) routeError(ctx context.Context, op *contract.Operation, x contract.Exchange, clientID string, err error) *contract.Error {
	var ce *contract.Error
	switch {
	case errors.As(err, &ce):
		return ce
	case errors.Is(err, bus.ErrBusLost):
		return s.unavailable(ctx, "nats", err, busLost(op, clientID))
	case bus.IsDisconnected(err):
		return s.unavailable(ctx, "nats", err, busDown)
	case bus.IsNoResponders(err):
		return contract.Errorf(contract.CodeExchangeUnavailable, "no %s connector is running; try again shortly", x)
	case errors.Is(err, context.Canceled):
		// The client hung up: nobody reads the answer, and it is no fault.
		return contract.Errorf(contract.CodeExchangeTimeout, "the client closed the request before %s answered", x)
	case bus.IsTimeout(err):
		if op.Places() {
			return contract.Errorf(contract.CodeExchangeTimeout,
				"%s did not answer within %s; the order state is unknown: look it up with getOrders (clientOrderId %s) before retrying",
				x, s.cfg.RequestTimeout, clientID)
		}
		return contract.Errorf(contract.CodeExchangeTimeout, "%s did not answer within %s", x, s.cfg.RequestTimeout)
	}
	return s.internal(ctx, fmt.Sprintf("route %s to %s", op.Name, x), err)
}

// internal logs a gateway fault with the request id the client sees and
// returns the fixed INTERNAL_ERROR.
func (s *Server) internal(ctx context.Context, what string, err error) *contract.Error {
	s.log.ErrorContext(ctx, "internal fault", "request_id", telemetry.RequestID(ctx), "during", what, "err", err)
	return &contract.Error{Code: contract.CodeInternal, Message: contract.InternalMessage}
}

// busDown is the message of SERVICE_UNAVAILABLE while NATS is unreachable.
const busDown = "the gateway's message bus (NATS) is unreachable; retry shortly"

// busLost is the message of SERVICE_UNAVAILABLE for a trading call whose
// reply was lost with the bus: what was done is unknown, and how to learn it.
func busLost(op *contract.Operation, clientID string) string {
	const lost = "the gateway's message bus (NATS) went down while this call was in flight, so its outcome is unknown"
	if op.Places() {
		return lost + "; repeat the call with the same clientOrderId " + clientID +
			": it returns the order if it was placed and places it once if it was not"
	}
	return lost + "; look at getOrders and getPositions before repeating it"
}

// retryAfterUnavailable is the Retry-After of SERVICE_UNAVAILABLE: long
// enough for a restarting dependency, short enough not to idle clients.
const retryAfterUnavailable = 2

// unavailable logs that a dependency of the gateway failed and returns
// SERVICE_UNAVAILABLE with msg, which names the dependency for the client.
func (s *Server) unavailable(ctx context.Context, dependency string, err error, msg string) *contract.Error {
	s.log.WarnContext(ctx, "dependency unavailable", "request_id", telemetry.RequestID(ctx), "dependency", dependency, "err", err)
	ce := contract.Errorf(contract.CodeServiceUnavailable, "%s", msg)
	ce.RetryAfterSeconds = retryAfterUnavailable
	return ce
}

// tradingRefused refuses a trading call at once when the bus is down (its
// audit entry would wait out the publish timeout, then fail) or when the
// stores of records may drop them or cannot write (StoreGuard).
func (s *Server) tradingRefused(ctx context.Context) *contract.Error {
	if !s.nc.IsConnected() {
		return s.unavailable(ctx, "nats", bus.ErrDisconnected, busDown)
	}
	if s.guard == nil {
		return nil
	}
	if err := s.guard(); err != nil {
		return s.unavailable(ctx, "record store", err, "trading calls are refused: "+err.Error())
	}
	return nil
}

// lookupFailed maps a failed key or credential look-up: the bus, the keys
// service or its database being down is SERVICE_UNAVAILABLE, anything
// else a fault.
func (s *Server) lookupFailed(ctx context.Context, what string, err error) *contract.Error {
	var ce *contract.Error
	switch {
	case errors.As(err, &ce) && ce.Code == contract.CodeServiceUnavailable:
		// The keys service's own dependency (its database) is down.
		s.log.WarnContext(ctx, "dependency unavailable", "request_id", telemetry.RequestID(ctx), "dependency", "keys service", "err", err)
		return ce
	case bus.IsDisconnected(err):
		return s.unavailable(ctx, "nats", err, busDown)
	case bus.IsNoResponders(err), bus.IsTimeout(err):
		return s.unavailable(ctx, "keys service", err,
			"the keys service is not answering, so "+what+"; retry shortly")
	}
	return s.internal(ctx, "look-up", err)
}
