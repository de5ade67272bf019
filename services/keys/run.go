package keys

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys/admin"
)

// shutdownGrace bounds how long in-flight admin requests may finish.
const shutdownGrace = 10 * time.Second

// Start registers the NATS micro service and starts the admin API on
// Config.AdminAddr (when set). It listens synchronously, so a taken port
// fails here; serving continues in the background until Close. ctx bounds
// the start only.
func (s *Service) Start(ctx context.Context) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.nc == nil {
		return errors.New("start keys service: no NATS connection")
	}
	s.mu.Lock()
	if s.started || s.closed {
		s.mu.Unlock()
		return errors.New("start keys service: already started or closed")
	}
	s.started = true
	s.lifetime, s.cancel = context.WithCancel(context.Background())
	s.mu.Unlock()
	defer func() {
		if err != nil {
			s.Close()
		}
	}()

	svc, err := s.addMicro()
	if err != nil {
		return fmt.Errorf("start keys service: %w", err)
	}
	s.mu.Lock()
	s.micro = svc
	s.mu.Unlock()
	stopActivity, err := s.startActivity(ctx)
	if err != nil {
		return fmt.Errorf("start keys service: %w", err)
	}
	s.mu.Lock()
	s.stopActivity = stopActivity
	s.mu.Unlock()
	s.startRetention(s.lifetime)

	if s.cfg.AdminAddr != "" {
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", s.cfg.AdminAddr)
		if err != nil {
			return fmt.Errorf("start keys service: admin api on %s (set by %s): %w", s.cfg.AdminAddr, adminAddrVar, err)
		}
		srv := &http.Server{
			Handler:           s.AdminHandler(),
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       2 * time.Minute,
		}
		served := make(chan struct{})
		s.mu.Lock()
		s.http, s.listener, s.served = srv, ln, served
		s.mu.Unlock()
		go func() {
			defer close(served)
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("admin api stopped", "err", err)
			}
		}()
	}
	s.log.InfoContext(ctx, "keys service started", "admin_addr", s.AdminAddr(), "subjects", s.subjects.KeysRoot())
	return nil
}

// Run starts the service, serves until ctx is cancelled, then stops it.
// It returns the start error, or the first error of stopping.
func (s *Service) Run(ctx context.Context) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	return s.Close()
}

// AdminAddr returns the address the admin API listens on ("" when it does
// not), useful with a ":0" Config.AdminAddr.
func (s *Service) AdminAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listener == nil {
		return ""
	}
	return s.listener.Addr().String()
}

// Close stops serving in reverse order of Start: the admin API finishes
// in-flight requests (bounded by a grace period), then the micro service
// drains. It leaves the NATS connection and the store to their owner. It
// is idempotent and safe after a failed or partial Start.
func (s *Service) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	srv, served, svc, cancel, started, stopActivity := s.http, s.served, s.micro, s.cancel, s.started, s.stopActivity
	s.mu.Unlock()
	if stopActivity != nil {
		stopActivity()
	}

	var errs []error
	if srv != nil {
		ctx, stop := context.WithTimeout(context.Background(), shutdownGrace)
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop admin api: %w", err))
		}
		stop()
		<-served
	}
	if svc != nil {
		if err := svc.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop keys micro service: %w", err))
		}
	}
	if cancel != nil {
		cancel()
	}
	if started {
		s.log.Info("keys service stopped")
	}
	return errors.Join(errs...)
}

// AdminHandler returns the admin REST API (keys/admin) on this Service,
// authenticating with Config.AdminToken. Start serves it on
// Config.AdminAddr; it is exported for tests and for hosts that mount it
// themselves.
func (s *Service) AdminHandler() http.Handler {
	return admin.NewHandler(adminBackend{s}, s.cfg.AdminToken.Reveal(), s.log)
}

// adminBackend serves the admin API from the Service; the admin package's
// request types mirror the Service's field for field.
type adminBackend struct{ *Service }

var _ admin.Backend = adminBackend{}

func (b adminBackend) CreateAccount(ctx context.Context, tier contract.Tier, name string) (admin.Account, error) {
	a, err := b.Service.CreateAccount(ctx, tier, name)
	return admin.Account(a), err
}

func (b adminBackend) ListAccounts(ctx context.Context) ([]admin.Account, error) {
	as, err := b.Service.ListAccounts(ctx)
	out := make([]admin.Account, len(as))
	for i, a := range as {
		out[i] = admin.Account(a)
	}
	return out, err
}

func (b adminBackend) CreateKey(ctx context.Context, accountID string, req admin.KeyRequest) (admin.NewKey, error) {
	k, err := b.Service.CreateKey(ctx, accountID, KeyRequest(req))
	return admin.NewKey(k), err
}

func (b adminBackend) HaltKey(ctx context.Context, keyID string, req contract.HaltRequest) (contract.HaltResult, error) {
	return b.Service.HaltKey(ctx, keyID, req)
}

func (b adminBackend) CreateCredential(ctx context.Context, accountID string, req admin.CredentialRequest) (contract.CredentialInfo, error) {
	return b.Service.CreateCredential(ctx, accountID, CredentialRequest(req))
}
