package telemetry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// LogConfig selects the log format and level.
type LogConfig struct {
	Format string // PERPGATE_LOG_FORMAT: json (default) or text
	Level  string // PERPGATE_LOG_LEVEL: debug, info (default), warn, error
}

// LoadLogConfig reads the log settings through lookup.
func LoadLogConfig(lookup func(string) (string, bool), defaultFormat string) (LogConfig, error) {
	c := LogConfig{Format: defaultFormat, Level: "info"}
	if v, ok := lookup("PERPGATE_LOG_FORMAT"); ok && v != "" {
		c.Format = strings.ToLower(v)
	}
	if v, ok := lookup("PERPGATE_LOG_LEVEL"); ok && v != "" {
		c.Level = strings.ToLower(v)
	}
	if c.Format != "json" && c.Format != "text" {
		return c, fmt.Errorf("PERPGATE_LOG_FORMAT: %q is neither json nor text", c.Format)
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.Level)); err != nil {
		return c, fmt.Errorf("PERPGATE_LOG_LEVEL: %q is not one of debug, info, warn, error", c.Level)
	}
	return c, nil
}

// NewLogger builds the process logger writing to w; repeated warnings and
// errors are limited (see repeatWindow).
func NewLogger(w io.Writer, c LogConfig) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewJSONHandler(w, opts)
	if c.Format == "text" {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(limitRepeats(h, time.Now))
}

// RouteRedisLogs sends what go-redis logs on its own (a pool that cannot
// dial, say) to log at warn level, so that every line a service writes is
// one of its structured lines. go-redis keeps one logger per process: call
// this once, from main.
func RouteRedisLogs(log *slog.Logger) { redis.SetLogger(redisLogger{log}) }

type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis client", "detail", fmt.Sprintf(format, v...))
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id the client sees, so
// that a fault logged deep in a request names it.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id WithRequestID stored, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
