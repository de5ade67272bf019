package admin

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/perpgate/perpgate/pkg/contract"
)

// BodyLimit is the largest request body the admin API reads.
const BodyLimit = 64 << 10

// Route paths, relative to the server root.
const (
	pathAccounts          = "/admin/v1/accounts"
	pathAccountKeys       = "/admin/v1/accounts/:id/keys"
	pathRevokeKey         = "/admin/v1/keys/:id/revoke"
	pathKey               = "/admin/v1/keys/:id"
	pathHaltKey           = "/admin/v1/keys/:id/halt"
	pathKeyUsage          = "/admin/v1/keys/:id/usage"
	pathAccountAudit      = "/admin/v1/accounts/:id/audit"
	pathAccountCredential = "/admin/v1/accounts/:id/credentials"
	pathCredential        = "/admin/v1/credentials/:id"
)

type handler struct {
	backend Backend
	token   string
	log     *slog.Logger
}

// NewHandler returns the admin REST API serving b. Every request must carry
// `Authorization: Bearer <token>` (401 ADMIN_UNAUTHORIZED otherwise, also
// for unknown routes, so the API reveals nothing to strangers). An empty
// token rejects every request.
func NewHandler(b Backend, token string, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &handler{backend: b, token: token, log: log}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = h.handleError
	e.Use(h.authenticate)
	e.Use(middleware.BodyLimit("64K"))

	e.POST(pathAccounts, h.createAccount)
	e.GET(pathAccounts, h.listAccounts)
	e.POST(pathAccountKeys, h.createKey)
	e.GET(pathAccountKeys, h.listKeys)
	e.POST(pathRevokeKey, h.revokeKey)
	e.PATCH(pathKey, h.patchKey)
	e.POST(pathHaltKey, h.haltKey)
	e.GET(pathKeyUsage, h.keyUsage)
	e.GET(pathAccountAudit, h.audit)
	e.POST(pathAccountCredential, h.createCredential)
	e.GET(pathAccountCredential, h.listCredentials)
	e.DELETE(pathCredential, h.deleteCredential)
	return e
}

func (h *handler) createAccount(c echo.Context) error {
	var body struct {
		Tier contract.Tier `json:"tier"`
		Name string        `json:"name"`
	}
	if _, err := decodeBody(c, &body, "tier", "name"); err != nil {
		return err
	}
	a, err := h.backend.CreateAccount(c.Request().Context(), body.Tier, body.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, AccountResponse{Success: true, Account: a})
}

func (h *handler) listAccounts(c echo.Context) error {
	as, err := h.backend.ListAccounts(c.Request().Context())
	if err != nil {
		return err
	}
	if as == nil {
		as = []Account{}
	}
	return c.JSON(http.StatusOK, AccountsResponse{Success: true, Accounts: as})
}

func (h *handler) createKey(c echo.Context) error {
	var body struct {
		Env                contract.KeyEnv     `json:"env"`
		AllowedOperations  []string            `json:"allowedOperations"`
		AllowedExchanges   []contract.Exchange `json:"allowedExchanges"`
		AllowedCredentials []string            `json:"allowedCredentials"`
		ExpiresAt          *string             `json:"expiresAt"`
	}
	fields, err := decodeBody(c, &body, append([]string{"env", "allowedOperations", "allowedExchanges", "allowedCredentials", "expiresAt"}, contract.GuardFields...)...)
	if err != nil {
		return err
	}
	req := KeyRequest{
		Env:                body.Env,
		AllowedOperations:  body.AllowedOperations,
		AllowedExchanges:   body.AllowedExchanges,
		AllowedCredentials: body.AllowedCredentials,
	}
	guards := map[string]json.RawMessage{}
	for _, f := range contract.GuardFields {
		if raw, ok := fields[f]; ok {
			guards[f] = raw
		}
	}
	g, ce := contract.PatchGuards(contract.Guards{}, guards)
	if ce != nil {
		return ce
	}
	req.Guards = g
	if body.ExpiresAt != nil {
		t, err := time.Parse(time.RFC3339, *body.ExpiresAt)
		if err != nil {
			return contract.Errorf(contract.CodeInvalidRequest, "expiresAt must be an RFC 3339 time such as 2030-01-01T00:00:00Z")
		}
		req.ExpiresAt = &t
	}
	k, err := h.backend.CreateKey(c.Request().Context(), c.Param("id"), req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, CreatedKeyResponse{Success: true, Key: k.Key.Reveal(), KeyView: ViewOf(k.Info)})
}

func (h *handler) listKeys(c echo.Context) error {
	ks, err := h.backend.ListKeys(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	out := KeysResponse{Success: true, Keys: make([]KeyView, len(ks))}
	for i, k := range ks {
		out.Keys[i] = ViewOf(k)
	}
	return c.JSON(http.StatusOK, out)
}

// patchKey changes a key's guards (DESIGN §12): absent fields stay, null
// removes a limit.
func (h *handler) patchKey(c echo.Context) error {
	var body map[string]json.RawMessage
	if _, err := decodeBody(c, &body, contract.GuardFields...); err != nil {
		return err
	}
	k, err := h.backend.UpdateKeyGuards(c.Request().Context(), c.Param("id"), body)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, KeyResponse{Success: true, KeyView: ViewOf(k)})
}

// haltKey is the kill switch (DESIGN §13): the key turns read-only, and
// with the flags its orders are cancelled and positions closed. The body
// may be left out (read-only only).
func (h *handler) haltKey(c echo.Context) error {
	var body contract.HaltRequest
	if c.Request().ContentLength != 0 {
		if _, err := decodeBody(c, &body, "cancelOrders", "closePositions"); err != nil {
			return err
		}
	}
	res, err := h.backend.HaltKey(c.Request().Context(), c.Param("id"), body)
	if err != nil {
		return err
	}
	if res.Credentials == nil {
		res.Credentials = []contract.CredentialHalt{}
	}
	return c.JSON(http.StatusOK, HaltResponse{Success: true, HaltResult: res})
}

// keyUsage answers a key's request counts per day and operation; days
// defaults to 7.
func (h *handler) keyUsage(c echo.Context) error {
	days := 7
	if v := c.QueryParam("days"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return contract.Errorf(contract.CodeInvalidRequest, "days must be a whole number of days, 1 to 92")
		}
		days = n
	}
	out, err := h.backend.KeyUsage(c.Request().Context(), c.Param("id"), days)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, UsageResponse{Success: true, KeyID: c.Param("id"), Days: out})
}

// audit answers a page of an account's audit trail: since and until are
// RFC 3339 times, limit defaults to 100, cursor continues a listing,
// order=newest lists newest first (pass it again with the cursor).
func (h *handler) audit(c echo.Context) error {
	var since, until time.Time
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"since", &since}, {"until", &until}} {
		if v := c.QueryParam(p.name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return contract.Errorf(contract.CodeInvalidRequest, "%s must be an RFC 3339 time such as 2030-01-01T00:00:00Z", p.name)
			}
			*p.dst = t
		}
	}
	limit := 100
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return contract.Errorf(contract.CodeInvalidRequest, "limit must be a whole number, 1 to 1000")
		}
		limit = n
	}
	var newest bool
	switch c.QueryParam("order") {
	case "", "oldest":
	case "newest":
		newest = true
	default:
		return contract.Errorf(contract.CodeInvalidRequest, "order must be newest or oldest (the default)")
	}
	page, err := h.backend.AuditLog(c.Request().Context(), c.Param("id"), since, until, limit, c.QueryParam("cursor"), newest)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, AuditResponse{Success: true, AuditPage: page})
}

func (h *handler) revokeKey(c echo.Context) error {
	k, err := h.backend.RevokeKey(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, KeyResponse{Success: true, KeyView: ViewOf(k)})
}

func (h *handler) createCredential(c echo.Context) error {
	var body CredentialRequest
	if _, err := decodeBody(c, &body, "exchange", "env", "label", "secret"); err != nil {
		return err
	}
	cred, err := h.backend.CreateCredential(c.Request().Context(), c.Param("id"), body)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, CredentialResponse{Success: true, CredentialInfo: cred})
}

func (h *handler) listCredentials(c echo.Context) error {
	cs, err := h.backend.ListCredentials(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	if cs == nil {
		cs = []contract.CredentialInfo{}
	}
	return c.JSON(http.StatusOK, CredentialsResponse{Success: true, Credentials: cs})
}

func (h *handler) deleteCredential(c echo.Context) error {
	id := c.Param("id")
	if err := h.backend.DeleteCredential(c.Request().Context(), id); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, DeletedResponse{Success: true, CredentialID: id, Deleted: true})
}

// decodeBody reads a JSON object into dst. INVALID_JSON when the body is
// not one JSON object; INVALID_REQUEST naming the field when a field is
// not among allowed or has the wrong type; PAYLOAD_TOO_LARGE past BodyLimit.
// Messages never quote values: a credential body holds secrets.
// decodeBody reads a JSON object with only the allowed fields into dst and
// also returns its fields raw.
func decodeBody(c echo.Context, dst any, allowed ...string) (map[string]json.RawMessage, error) {
	data, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge {
			return nil, contract.Errorf(contract.CodePayloadTooLarge, "request body is larger than %d bytes", BodyLimit)
		}
		return nil, contract.Errorf(contract.CodeInvalidJSON, "request body could not be read")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return nil, contract.Errorf(contract.CodeInvalidJSON, "request body must be a JSON object")
	}
	ok := make(map[string]bool, len(allowed))
	for _, f := range allowed {
		ok[f] = true
	}
	for f := range fields {
		if !ok[f] {
			return nil, contract.Errorf(contract.CodeInvalidRequest, "unknown field %q", truncate(f))
		}
	}
	if err := json.Unmarshal(data, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, contract.Errorf(contract.CodeInvalidRequest, "field %s must be %s", te.Field, jsonKind(te.Type.Kind().String()))
		}
		return nil, contract.Errorf(contract.CodeInvalidRequest, "request body does not match the expected fields")
	}
	return fields, nil
}

// jsonKind names a Go kind the way a JSON client thinks of it.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "bool":
		return "a boolean"
	}
	return "a " + k
}

// truncate keeps client-supplied text short in messages.
func truncate(s string) string {
	const max = 40
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// outageTeller is a Backend that can tell an outage of its store: Outage
// returns the SERVICE_UNAVAILABLE to answer, or nil.
type outageTeller interface {
	Outage(err error) *contract.Error
}

// handleError answers every failure with the JSON envelope. Contract
// errors travel as they are; echo's routing errors become NOT_FOUND,
// METHOD_NOT_ALLOWED or PAYLOAD_TOO_LARGE; anything else is logged and
// answered INTERNAL_ERROR with the fixed message.
func (h *handler) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	ce, ok := contract.AsError(err)
	if o, isTeller := h.backend.(outageTeller); !ok && isTeller {
		if oce := o.Outage(err); oce != nil {
			h.log.WarnContext(c.Request().Context(), "dependency unavailable", "dependency", "postgres",
				"method", c.Request().Method, "path", c.Path(), "err", err)
			ce, ok = oce, true
		}
	}
	if !ok {
		var he *echo.HTTPError
		switch {
		case errors.As(err, &he) && he.Code == http.StatusNotFound:
			ce = contract.Errorf(contract.CodeNotFound, "no admin route %s %s", c.Request().Method, c.Request().URL.Path)
		case errors.As(err, &he) && he.Code == http.StatusMethodNotAllowed:
			ce = contract.Errorf(contract.CodeMethodNotAllowed, "method %s is not allowed on %s", c.Request().Method, c.Request().URL.Path)
		case errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge:
			ce = contract.Errorf(contract.CodePayloadTooLarge, "request body is larger than %d bytes", BodyLimit)
		default:
			h.log.ErrorContext(c.Request().Context(), "admin request failed",
				"method", c.Request().Method, "path", c.Path(), "err", err)
		}
	}
	if ce.Code == contract.CodeAdminUnauthorized {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="perpgate-admin"`)
	}
	if ce.RetryAfterSeconds > 0 {
		c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(ce.RetryAfterSeconds))
	}
	if c.Request().Method == http.MethodHead {
		err = c.NoContent(ce.Status())
	} else {
		err = c.JSON(ce.Status(), errorResponse{Success: false, Error: ce})
	}
	if err != nil {
		h.log.ErrorContext(c.Request().Context(), "write admin error response", "err", err)
	}
}
