package venuekit

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// JWTExpiry reads a JWT's exp claim (the issuer's clock, Unix seconds)
// without checking the token; ok is false when it has none.
func JWTExpiry(jwt string) (exp time.Time, ok bool) {
	parts := strings.Split(jwt, ".")
	if len(parts) < 2 {
		return time.Time{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	if json.Unmarshal(raw, &claims) != nil || claims.Exp == 0 {
		return time.Time{}, false
	}
	return time.Unix(claims.Exp, 0), true
}
