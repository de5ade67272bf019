package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/perpgate/perpgate/pkg/contract"
)

// authenticate admits requests whose bearer token is the admin token.
func (h *handler) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !authorized(c.Request().Header.Get(echo.HeaderAuthorization), h.token) {
			return contract.Errorf(contract.CodeAdminUnauthorized, "missing or wrong admin token; send Authorization: Bearer <PERPGATE_ADMIN_TOKEN>")
		}
		return next(c)
	}
}

// authorized reports whether an Authorization header carries token. The
// comparison takes the same time whatever the header holds: both sides are
// hashed to equal length first, then compared in constant time.
func authorized(header, token string) bool {
	scheme, got, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return false
	}
	a := sha256.Sum256([]byte(strings.TrimSpace(got)))
	b := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
