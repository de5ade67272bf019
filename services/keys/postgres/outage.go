package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err means Postgres did not answer (refused
// or lost connections, a server shutting down or starting, no connection
// slot, a statement cut off by the deadline), as opposed to a statement
// that failed on its own. The keys service answers the first with
// SERVICE_UNAVAILABLE, which a client retries.
func (s *Store) Unavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// 08: connection exception; 57P01-57P03: shutdown, crash, not yet
		// accepting connections; 53300: too many connections.
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P") || pgErr.Code == "53300"
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || pgconn.Timeout(err) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, context.DeadlineExceeded) ||
		pgconn.SafeToRetry(err)
}
