package venue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
)

// Config configures a Venue.
type Config struct {
	// Addr is the listen address, e.g. ":8090" or "127.0.0.1:0".
	Addr string
	// ShutdownTimeout bounds how long Close waits for in-flight requests.
	ShutdownTimeout time.Duration
}

// DefaultConfig returns the defaults: Addr ":8090", ShutdownTimeout 10s.
func DefaultConfig() Config {
	return Config{Addr: ":8090", ShutdownTimeout: 10 * time.Second}
}

// Validate reports every problem with c.
func (c Config) Validate() error {
	var errs []error
	if c.Addr == "" {
		errs = append(errs, errors.New("paper venue: listen address is empty"))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, fmt.Errorf("paper venue: shutdown timeout %s must be positive", c.ShutdownTimeout))
	}
	return errors.Join(errs...)
}

// Venue serves one paper engine over HTTP.
type Venue struct {
	cfg    Config
	engine *paper.Engine
	log    *slog.Logger

	mu      sync.Mutex
	ln      net.Listener
	srv     *http.Server
	serveCh chan error
	closed  bool
}

// New returns a venue for engine (a default engine when nil) that logs to
// log (discarded when nil). It fails when cfg is invalid.
func New(cfg Config, engine *paper.Engine, log *slog.Logger) (*Venue, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if engine == nil {
		engine = paper.New(paper.Config{})
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Venue{cfg: cfg, engine: engine, log: log}, nil
}

// Engine returns the venue's engine.
func (v *Venue) Engine() *paper.Engine { return v.engine }

// Open listens on the configured address, failing at once when it is
// taken, and serves in the background.
func (v *Venue) Open() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ln != nil || v.closed {
		return errors.New("paper venue: already opened")
	}
	ln, err := net.Listen("tcp", v.cfg.Addr)
	if err != nil {
		return fmt.Errorf("paper venue: listen %s: %w", v.cfg.Addr, err)
	}
	v.ln = ln
	v.srv = &http.Server{
		Handler:           v.logRequests(newHandler(v.engine, v.log)),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
	}
	v.serveCh = make(chan error, 1)
	go func() { v.serveCh <- v.srv.Serve(ln) }()
	v.log.Info("paper venue started", "addr", ln.Addr().String())
	return nil
}

// Addr returns the address listened on, or "" before Open.
func (v *Venue) Addr() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ln == nil {
		return ""
	}
	return v.ln.Addr().String()
}

// URL returns the base URL of the venue for a Client, or "" before Open.
func (v *Venue) URL() string {
	a := v.Addr()
	if a == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil || host == "" || net.ParseIP(host).IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Close stops accepting requests and waits up to ShutdownTimeout for those
// in flight. It is idempotent and safe before Open.
func (v *Venue) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil
	}
	v.closed = true
	if v.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), v.cfg.ShutdownTimeout)
	defer cancel()
	err := v.srv.Shutdown(ctx)
	v.log.Info("paper venue stopped")
	if err != nil {
		return fmt.Errorf("paper venue: shutdown: %w", err)
	}
	return nil
}

// Run opens the venue, serves until ctx is cancelled, then closes it. It
// returns at once when the address cannot be listened on.
func (v *Venue) Run(ctx context.Context) error {
	if err := v.Open(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return v.Close()
	case err := <-v.serveCh:
		v.Close()
		return fmt.Errorf("paper venue: serve: %w", err)
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

// Unwrap lets the websocket upgrade of /v1/stream reach the connection
// (http.ResponseController and the websocket library both look for it):
// without it every stream dial to a venue process was answered 501.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (v *Venue) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		v.log.Debug("request done", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"duration_ms", time.Since(start).Milliseconds())
	})
}
