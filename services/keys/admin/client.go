package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/perpgate/perpgate/pkg/contract"
)

// Client calls the admin REST API. Its methods return the API's
// *contract.Error when the server answers with an error envelope, and a
// wrapped transport error when it cannot be reached.
type Client struct {
	baseURL string
	token   string
	// HTTPClient sends the requests; http.DefaultClient when nil.
	HTTPClient *http.Client
}

// NewClient returns a client of the admin API at baseURL (such as
// http://127.0.0.1:8081) authenticating with token.
func NewClient(baseURL, token string) *Client {
	return &Client{baseURL: strings.TrimRight(baseURL, "/"), token: token}
}

// CreateAccount calls POST /admin/v1/accounts.
func (c *Client) CreateAccount(ctx context.Context, tier contract.Tier, name string) (AccountResponse, error) {
	var out AccountResponse
	body := map[string]any{"tier": tier}
	if name != "" {
		body["name"] = name
	}
	err := c.do(ctx, http.MethodPost, "/admin/v1/accounts", body, &out)
	return out, err
}

// ListAccounts calls GET /admin/v1/accounts.
func (c *Client) ListAccounts(ctx context.Context) (AccountsResponse, error) {
	var out AccountsResponse
	err := c.do(ctx, http.MethodGet, "/admin/v1/accounts", nil, &out)
	return out, err
}

// CreateKey calls POST /admin/v1/accounts/{id}/keys.
func (c *Client) CreateKey(ctx context.Context, accountID string, req KeyRequest) (CreatedKeyResponse, error) {
	var out CreatedKeyResponse
	err := c.do(ctx, http.MethodPost, "/admin/v1/accounts/"+url.PathEscape(accountID)+"/keys", req, &out)
	return out, err
}

// ListKeys calls GET /admin/v1/accounts/{id}/keys.
func (c *Client) ListKeys(ctx context.Context, accountID string) (KeysResponse, error) {
	var out KeysResponse
	err := c.do(ctx, http.MethodGet, "/admin/v1/accounts/"+url.PathEscape(accountID)+"/keys", nil, &out)
	return out, err
}

// RevokeKey calls POST /admin/v1/keys/{id}/revoke.
func (c *Client) RevokeKey(ctx context.Context, keyID string) (KeyResponse, error) {
	var out KeyResponse
	err := c.do(ctx, http.MethodPost, "/admin/v1/keys/"+url.PathEscape(keyID)+"/revoke", nil, &out)
	return out, err
}

// UpdateKeyGuards calls PATCH /admin/v1/keys/{id} with the guard fields
// of patch (null removes a limit).
func (c *Client) UpdateKeyGuards(ctx context.Context, keyID string, patch map[string]json.RawMessage) (KeyResponse, error) {
	var out KeyResponse
	err := c.do(ctx, http.MethodPatch, "/admin/v1/keys/"+url.PathEscape(keyID), patch, &out)
	return out, err
}

// HaltKey calls POST /admin/v1/keys/{id}/halt.
func (c *Client) HaltKey(ctx context.Context, keyID string, req contract.HaltRequest) (HaltResponse, error) {
	var out HaltResponse
	err := c.do(ctx, http.MethodPost, "/admin/v1/keys/"+url.PathEscape(keyID)+"/halt", req, &out)
	return out, err
}

// KeyUsage calls GET /admin/v1/keys/{id}/usage?days=N.
func (c *Client) KeyUsage(ctx context.Context, keyID string, days int) (UsageResponse, error) {
	var out UsageResponse
	err := c.do(ctx, http.MethodGet, "/admin/v1/keys/"+url.PathEscape(keyID)+"/usage?days="+strconv.Itoa(days), nil, &out)
	return out, err
}

// Audit calls GET /admin/v1/accounts/{id}/audit with the query q (since,
// until, limit, cursor).
func (c *Client) Audit(ctx context.Context, accountID string, q url.Values) (AuditResponse, error) {
	var out AuditResponse
	path := "/admin/v1/accounts/" + url.PathEscape(accountID) + "/audit"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

// CreateCredential calls POST /admin/v1/accounts/{id}/credentials.
func (c *Client) CreateCredential(ctx context.Context, accountID string, req CredentialRequest) (CredentialResponse, error) {
	var out CredentialResponse
	err := c.do(ctx, http.MethodPost, "/admin/v1/accounts/"+url.PathEscape(accountID)+"/credentials", req, &out)
	return out, err
}

// ListCredentials calls GET /admin/v1/accounts/{id}/credentials.
func (c *Client) ListCredentials(ctx context.Context, accountID string) (CredentialsResponse, error) {
	var out CredentialsResponse
	err := c.do(ctx, http.MethodGet, "/admin/v1/accounts/"+url.PathEscape(accountID)+"/credentials", nil, &out)
	return out, err
}

// DeleteCredential calls DELETE /admin/v1/credentials/{id}.
func (c *Client) DeleteCredential(ctx context.Context, credentialID string) (DeletedResponse, error) {
	var out DeletedResponse
	err := c.do(ctx, http.MethodDelete, "/admin/v1/credentials/"+url.PathEscape(credentialID), nil, &out)
	return out, err
}

// do sends one request and decodes the success body into out or the error
// envelope into a *contract.Error.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("admin %s %s: encode body: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, body)
	if err != nil {
		return fmt.Errorf("admin %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("admin %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("admin %s %s: read response: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		var ce contract.Error
		if json.Unmarshal(data, &ce) != nil || ce.Code == "" {
			return fmt.Errorf("admin %s %s: unexpected status %s", method, path, resp.Status)
		}
		return &ce
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("admin %s %s: decode response: %w", method, path, err)
	}
	return nil
}
