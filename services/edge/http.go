package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/health"
	"github.com/perpgate/perpgate/pkg/ratelimit"
	"github.com/perpgate/perpgate/pkg/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// MaxBody is the largest request body accepted (DESIGN §4 step 2).
const MaxBody = 64 << 10

// Response headers of SPEC §7/§8.
const (
	HeaderRequestID       = "X-Request-Id"
	HeaderDuration        = "X-Request-Duration-Ms"
	HeaderLimitMinute     = "X-RateLimit-Limit-Minute"
	HeaderRemainingMinute = "X-RateLimit-Remaining-Minute"
	HeaderLimitDay        = "X-RateLimit-Limit-Day"
	HeaderRemainingDay    = "X-RateLimit-Remaining-Day"
	HeaderRateLimitPolicy = "RateLimit-Policy"
	HeaderRateLimit       = "RateLimit"
)

// requestLog is what the request log and metrics say about a request,
// filled in as the request goes; one per request, on the echo context.
type requestLog struct {
	requestID, operation, exchange, keyPrefix, code string
}

// stamped is the echo context stamp hands on: the request's requestLog
// rides on it, as echo's c.Set would have it but without the map c.Set
// makes for every request.
type stamped struct {
	echo.Context
	log requestLog
}

// logOf is the request's requestLog; a request stamp did not see (none
// reach the handlers) gets a throwaway one.
func logOf(c echo.Context) *requestLog {
	if sc, ok := c.(*stamped); ok {
		return &sc.log
	}
	return &requestLog{}
}

func (s *Server) routes() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	e.Use(s.stamp)
	e.Any("/v1", s.handleV1)
	e.Any(eventsPath, s.handleEvents)
	e.Any(wsPath, s.handleWS)
	ops := echo.WrapHandler(health.PublicHandler(s.checks))
	e.GET("/healthz", ops)
	e.GET("/readyz", ops)
	if s.metrics != nil {
		e.GET("/metrics", echo.WrapHandler(s.metrics.Handler()))
	}
	e.Any("/openapi.json", func(c echo.Context) error {
		if m := c.Request().Method; m != http.MethodGet && m != http.MethodHead {
			return s.fail(c, contract.Errorf(contract.CodeMethodNotAllowed, "use GET /openapi.json; %s is not allowed", m))
		}
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, contract.OpenAPIDocument)
	})
	s.mountMCP(e)
	e.RouteNotFound("/*", func(c echo.Context) error {
		return s.fail(c, contract.Errorf(contract.CodeNotFound, "no route %s %s; the API is POST /v1", c.Request().Method, c.Request().URL.Path))
	})
	return e
}

// stamp gives every response its request id and duration, continues the
// caller's trace (W3C traceparent) in a span of its own, and logs and
// measures the request once it is done.
func (s *Server) stamp(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		id := uuid.NewString()
		sc := &stamped{Context: c, log: requestLog{requestID: id}}
		req := c.Request()
		ctx, span := telemetry.StartServerSpan(req.Context(), req.Header, func() string { return "edge " + req.URL.Path })
		defer span.End()
		if span.IsRecording() {
			span.SetAttributes(attribute.String("perpgate.request_id", id))
		}
		c.SetRequest(req.WithContext(telemetry.WithRequestID(ctx, id)))
		res := c.Response()
		// Both values share one backing array: a header value slice per
		// field was a good part of the edge's allocations.
		vals := &[2]string{id}
		res.Header()[HeaderRequestID] = vals[0:1:1]
		res.Before(func() {
			ms := float64(time.Since(start).Microseconds()) / 1000
			vals[1] = strconv.FormatFloat(ms, 'f', 3, 64)
			res.Header()[HeaderDuration] = vals[1:2:2]
		})
		if err := next(sc); err != nil {
			// Not c.Error: echo would hand the error handler c, not sc.
			s.errorHandler(err, sc)
		}
		s.finish(sc, &sc.log, span, start)
		return nil
	}
}

// finish names the span by operation and exchange, and logs and counts
// the request.
func (s *Server) finish(c echo.Context, rl *requestLog, span trace.Span, start time.Time) {
	elapsed := time.Since(start)
	op, exchange, code := rl.operation, rl.exchange, rl.code
	if code == "" {
		code = "OK"
	}
	if op != "" {
		s.metrics.ObserveRequest(op, exchange, code, elapsed)
	}
	// Without a trace exporter the span records nothing: skip building
	// its name and attributes on every request.
	if span.IsRecording() {
		if op != "" {
			span.SetName("edge " + op + " " + exchange)
			span.SetAttributes(attribute.String("perpgate.operation", op), attribute.String("perpgate.exchange", exchange))
		}
		span.SetAttributes(attribute.String("perpgate.code", code), attribute.Int("http.status_code", c.Response().Status))
	}
	ctx := c.Request().Context()
	if !s.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	// LogAttrs with typed attributes: this line is written for every
	// request, and boxing each value in an any showed in the profile.
	attrs := make([]slog.Attr, 0, 10)
	attrs = append(attrs,
		slog.String("request_id", rl.requestID),
		slog.String("trace_id", span.SpanContext().TraceID().String()),
		slog.String("method", c.Request().Method),
		slog.String("path", c.Request().URL.Path),
		slog.Int("status", c.Response().Status),
		slog.String("code", code),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
	)
	for _, a := range [...]slog.Attr{slog.String("operation", op), slog.String("exchange", exchange),
		slog.String("key_prefix", rl.keyPrefix)} {
		if a.Value.String() != "" {
			attrs = append(attrs, a)
		}
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "request done", attrs...)
}

// errorHandler renders anything echo itself rejects in the same envelope.
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusMethodNotAllowed:
			_ = s.fail(c, contract.Errorf(contract.CodeMethodNotAllowed, "method %s is not allowed here", c.Request().Method))
			return
		case http.StatusNotFound:
			_ = s.fail(c, contract.Errorf(contract.CodeNotFound, "no route %s", c.Request().URL.Path))
			return
		}
	}
	var ce *contract.Error
	if errors.As(err, &ce) {
		_ = s.fail(c, ce)
		return
	}
	s.log.Error("internal fault", "request_id", logOf(c).requestID, "err", err)
	_ = s.fail(c, &contract.Error{Code: contract.CodeInternal, Message: contract.InternalMessage})
}

type envelope struct {
	Success bool `json:"success"`
	*contract.Error
}

// fail writes the error envelope with the code's status.
func (s *Server) fail(c echo.Context, ce *contract.Error) error {
	logOf(c).code = string(ce.Code)
	h := c.Response().Header()
	switch ce.Code {
	case contract.CodeMethodNotAllowed:
		h.Set("Allow", http.MethodPost)
		switch c.Path() {
		case "/openapi.json":
			h.Set("Allow", "GET, HEAD")
		case "/mcp/sse":
			h.Set("Allow", "GET, POST")
		case eventsPath, wsPath:
			h.Set("Allow", http.MethodGet)
		}
	case contract.CodeRateLimited, contract.CodeServiceUnavailable:
		h.Set("Retry-After", strconv.Itoa(max(ce.RetryAfterSeconds, 1)))
	}
	if ce.Status() == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", wwwAuthenticate(ce))
	}
	return c.JSONBlob(ce.Status(), envelopeJSON(ce))
}

// wwwAuthenticate is the RFC 6750 challenge of a 401, so OAuth-aware
// clients (MCP ones among them) show our message: no error parameter when
// no key was sent, invalid_token for a key that is refused.
func wwwAuthenticate(ce *contract.Error) string {
	v := `Bearer realm="perpgate"`
	if ce.Code != contract.CodeMissingAPIKey {
		v += `, error="invalid_token"`
	}
	// A quoted-string may not hold '"' or '\' unescaped; messages are ours.
	desc := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(ce.Message)
	return v + `, error_description="` + desc + `"`
}

// envelopeJSON encodes the error envelope without HTML escaping, so a
// message reads "<key>" rather than "\u003ckey\u003e".
func envelopeJSON(ce *contract.Error) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(envelope{Error: ce}) // an envelope of strings always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// succeed writes {"success":true, ...result fields}.
func succeed(c echo.Context, result json.RawMessage) error {
	w := c.Response()
	w.Header()[echo.HeaderContentType] = contentTypeJSON
	w.WriteHeader(http.StatusOK)
	if len(result) < 2 || string(result) == "{}" || result[0] != '{' {
		_, err := w.Write(successOnly)
		return err
	}
	if _, err := w.Write(successOpen); err != nil {
		return err
	}
	_, err := w.Write(result[1:])
	return err
}

// Shared, never modified: net/http only reads header values.
var (
	contentTypeJSON = []string{echo.MIMEApplicationJSON}
	successOnly     = []byte(`{"success":true}`)
	successOpen     = []byte(`{"success":true,`)
)

func (s *Server) handleV1(c echo.Context) error {
	req := c.Request()
	if req.Method != http.MethodPost {
		return s.fail(c, contract.Errorf(contract.CodeMethodNotAllowed, "use POST /v1; %s is not allowed", req.Method))
	}
	body, err := readBody(req)
	if err != nil {
		return s.fail(c, contract.Errorf(contract.CodePayloadTooLarge, "request body is larger than %d bytes", MaxBody))
	}
	// One deadline for the whole request: look-ups, limiter and exchange.
	// Its timer is armed only if a step waits on it (bus.WithDeadline).
	ctx, cancel := bus.WithDeadline(req.Context(), time.Now().Add(s.cfg.RequestTimeout))
	defer cancel()
	key, ce := s.authenticate(ctx, apiKeyOf(req))
	if ce != nil {
		return s.fail(c, ce)
	}
	logOf(c).keyPrefix = key.Display
	var opName string
	result, ce := s.authorized(c, ctx, key, body, &opName)
	s.countUsage(key.ID, opName, ce)
	if ce != nil {
		return s.fail(c, ce)
	}
	return succeed(c, result)
}

// authorized runs the steps after authentication: the rate limit, the
// body, the operation. opName is set once the operation is known.
func (s *Server) authorized(c echo.Context, ctx context.Context, key contract.KeyInfo, body []byte, opName *string) (json.RawMessage, *contract.Error) {
	if ce := s.rateLimit(ctx, c.Response().Header(), key); ce != nil {
		return nil, ce
	}
	op, fields, ce := contract.ParseRequest(body)
	if ce != nil {
		return nil, ce
	}
	defer contract.ReleaseFields(fields)
	*opName = op.Name
	rl := logOf(c)
	rl.operation = op.Name
	result, exchange, ce := s.executeAudited(ctx, "v1", rl.requestID, key, op, fields)
	rl.exchange = string(exchange)
	return result, ce
}

// readBody reads at most MaxBody bytes; errTooLarge when there is more.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxBody {
		return nil, errTooLarge
	}
	if r.ContentLength >= 0 {
		// The common case: one buffer of the announced size, read in full.
		b := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxBody {
		return nil, errTooLarge
	}
	return b, nil
}

var errTooLarge = errors.New("body too large")

// apiKeyOf takes the key from X-API-Key, else from Authorization: Bearer.
func apiKeyOf(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-API-Key")); k != "" {
		return k
	}
	auth := r.Header.Get("Authorization")
	if len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
		return strings.TrimSpace(auth[7:])
	}
	return ""
}

// setLimitHeaders writes the four X-RateLimit-* headers and the IETF
// RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers,
// structured-field form) for the minute and day windows. It runs on every
// request, so it writes all six values into one string and one slice, and
// stores them under the canonical names directly (Header.Set
// canonicalizes at each call).
func setLimitHeaders(h http.Header, d ratelimit.Decision) {
	var ends [6]int
	var b strings.Builder // its String does not copy
	b.Grow(160)
	var num [20]byte
	put := func(n int64) { b.Write(strconv.AppendInt(num[:0], n, 10)) }
	for i, n := range [4]int{d.LimitMinute, d.RemainingMinute, d.LimitDay, d.RemainingDay} {
		put(int64(n))
		ends[i] = b.Len()
	}
	b.WriteString(`"minute";q=`)
	put(int64(d.LimitMinute))
	b.WriteString(`;w=60, "day";q=`)
	put(int64(d.LimitDay))
	b.WriteString(";w=86400")
	ends[4] = b.Len()
	b.WriteString(`"minute";r=`)
	put(int64(d.RemainingMinute))
	b.WriteString(";t=")
	put(int64(d.ResetMinute / time.Second))
	b.WriteString(`, "day";r=`)
	put(int64(d.RemainingDay))
	b.WriteString(";t=")
	put(int64(d.ResetDay / time.Second))
	ends[5] = b.Len()
	all := b.String()
	vals := make([]string, 6)
	from := 0
	for i, end := range ends {
		vals[i] = all[from:end]
		h[limitHeaders[i]] = vals[i : i+1 : i+1]
		from = end
	}
}

// limitHeaders are the canonical names setLimitHeaders writes, in order.
var limitHeaders = func() (names [6]string) {
	for i, n := range []string{HeaderLimitMinute, HeaderRemainingMinute, HeaderLimitDay, HeaderRemainingDay,
		HeaderRateLimitPolicy, HeaderRateLimit} {
		names[i] = http.CanonicalHeaderKey(n)
	}
	return names
}()
