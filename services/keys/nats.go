package keys

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/micro"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/telemetry"
)

// handlerTimeout bounds a NATS request that carries no deadline of its own.
const handlerTimeout = 5 * time.Second

// addMicro registers the keys micro service on s.nc: under
// Subjects.KeysRoot the endpoints apikey and credential, and under its
// group secret one endpoint per exchange, so NATS permissions can grant
// each connector only its own exchange's subject. All use the default
// queue group, so replicas share the load.
func (s *Service) addMicro() (micro.Service, error) {
	svc, err := micro.AddService(s.nc, micro.Config{
		Name:        "keys",
		Version:     contract.Version,
		Description: "perpgate accounts, API keys and exchange credentials",
	})
	if err != nil {
		return nil, fmt.Errorf("add keys micro service: %w", err)
	}
	root := svc.AddGroup(s.subjects.KeysRoot())
	if err := root.AddEndpoint("apikey", micro.HandlerFunc(s.handleKeyLookup)); err != nil {
		svc.Stop()
		return nil, fmt.Errorf("add apikey endpoint: %w", err)
	}
	if err := root.AddEndpoint("credential", micro.HandlerFunc(s.handleCredentialLookup)); err != nil {
		svc.Stop()
		return nil, fmt.Errorf("add credential endpoint: %w", err)
	}
	if err := root.AddEndpoint("credentials", micro.HandlerFunc(s.handleCredentialList)); err != nil {
		svc.Stop()
		return nil, fmt.Errorf("add credentials endpoint: %w", err)
	}
	secrets := root.AddGroup("secret")
	for _, x := range contract.Exchanges {
		if err := secrets.AddEndpoint(string(x), micro.HandlerFunc(s.secretHandler(x))); err != nil {
			svc.Stop()
			return nil, fmt.Errorf("add secret endpoint for %s: %w", x, err)
		}
	}
	return svc, nil
}

// requestContext derives a handler's context from the service lifetime
// and the deadline the request carries (or handlerTimeout).
func (s *Service) requestContext(req micro.Request) (context.Context, context.CancelFunc) {
	s.mu.Lock()
	parent := s.lifetime
	s.mu.Unlock()
	if parent == nil {
		parent = context.Background()
	}
	// Continue the caller's trace (the edge or a connector).
	parent, span := telemetry.StartServerSpan(parent, req.Headers(), func() string { return "keys " + req.Subject() })
	var ctx context.Context
	var cancel context.CancelFunc
	if dl, ok := bus.Deadline(req.Headers()); ok {
		ctx, cancel = context.WithDeadline(parent, dl)
	} else {
		ctx, cancel = context.WithTimeout(parent, handlerTimeout)
	}
	return ctx, func() { cancel(); span.End() }
}

func (s *Service) handleKeyLookup(req micro.Request) {
	ctx, cancel := s.requestContext(req)
	defer cancel()
	var in contract.KeyLookupRequest
	if err := json.Unmarshal(req.Data(), &in); err != nil {
		s.respondError(ctx, req, "apikey", contract.Errorf(contract.CodeInvalidRequest, "body must be a KeyLookupRequest"))
		return
	}
	k, err := s.LookupKey(ctx, in.Hash)
	if err != nil {
		s.respondError(ctx, req, "apikey", err)
		return
	}
	s.respond(ctx, req, "apikey", k)
}

func (s *Service) handleCredentialLookup(req micro.Request) {
	ctx, cancel := s.requestContext(req)
	defer cancel()
	var in contract.CredentialLookupRequest
	if err := json.Unmarshal(req.Data(), &in); err != nil {
		s.respondError(ctx, req, "credential", contract.Errorf(contract.CodeInvalidRequest, "body must be a CredentialLookupRequest"))
		return
	}
	c, err := s.LookupCredential(ctx, in.CredentialID)
	if err != nil {
		s.respondError(ctx, req, "credential", err)
		return
	}
	s.respond(ctx, req, "credential", c)
}

// handleCredentialList answers an account's credentials, metadata only
// (the edge's getCredentials narrows them to what the key may use).
func (s *Service) handleCredentialList(req micro.Request) {
	ctx, cancel := s.requestContext(req)
	defer cancel()
	var in contract.CredentialListRequest
	if err := json.Unmarshal(req.Data(), &in); err != nil {
		s.respondError(ctx, req, "credentials", contract.Errorf(contract.CodeInvalidRequest, "body must be a CredentialListRequest"))
		return
	}
	cs, err := s.ListCredentials(ctx, in.AccountID)
	if err != nil {
		s.respondError(ctx, req, "credentials", err)
		return
	}
	s.respond(ctx, req, "credentials", cs)
}

func (s *Service) secretHandler(x contract.Exchange) micro.HandlerFunc {
	endpoint := "secret." + string(x)
	return func(req micro.Request) {
		ctx, cancel := s.requestContext(req)
		defer cancel()
		var in contract.SecretRequest
		if err := json.Unmarshal(req.Data(), &in); err != nil {
			s.respondError(ctx, req, endpoint, contract.Errorf(contract.CodeInvalidRequest, "body must be a SecretRequest"))
			return
		}
		resp, err := s.ReleaseSecret(ctx, x, in.CredentialID)
		if err != nil {
			s.respondError(ctx, req, endpoint, err)
			return
		}
		s.respond(ctx, req, endpoint, resp)
	}
}

func (s *Service) respond(ctx context.Context, req micro.Request, endpoint string, v any) {
	if err := bus.RespondJSON(req, v); err != nil {
		s.log.ErrorContext(ctx, "send nats reply", "endpoint", endpoint, "err", err)
	}
}

// respondError answers with err; a fault that is not a contract error is
// logged here with its cause and answered as INTERNAL_ERROR.
func (s *Service) respondError(ctx context.Context, req micro.Request, endpoint string, err error) {
	if ce := s.Outage(err); ce != nil {
		s.log.WarnContext(ctx, "dependency unavailable", "dependency", "postgres", "endpoint", endpoint, "err", err)
		err = ce
	} else if _, ok := contract.AsError(err); !ok {
		s.log.ErrorContext(ctx, "keys request failed", "endpoint", endpoint, "err", err)
	}
	if rerr := bus.RespondError(req, err); rerr != nil {
		s.log.ErrorContext(ctx, "send nats error reply", "endpoint", endpoint, "err", rerr)
	}
}
