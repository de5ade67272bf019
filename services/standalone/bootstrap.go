package standalone

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
)

// Bootstrap is what a first run creates, written to bootstrap.json (0600)
// so scripts and the next run find it (DESIGN §9).
type Bootstrap struct {
	AccountID    string `json:"accountId"`
	APIKey       string `json:"apiKey"`
	CredentialID string `json:"credentialId"`
	AdminToken   string `json:"adminToken"`
}

type secrets struct {
	masterKey  keys.Masked
	adminToken keys.Masked
}

// loadSecrets takes the master key and admin token from the config, else
// from the data dir, else generates them and keeps them there (0600).
func loadSecrets(cfg Config) (secrets, error) {
	s := secrets{masterKey: cfg.MasterKey, adminToken: cfg.AdminToken}
	if s.masterKey == "" {
		path := filepath.Join(cfg.DataDir, "master.key")
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			s.masterKey = keys.Masked(string(b))
		case errors.Is(err, fs.ErrNotExist):
			s.masterKey = keys.Masked(randomBase64(32))
			if err := os.WriteFile(path, []byte(s.masterKey.Reveal()), 0o600); err != nil {
				return s, fmt.Errorf("write master key: %w", err)
			}
		default:
			return s, fmt.Errorf("read master key: %w", err)
		}
	}
	if s.adminToken == "" {
		if boot, err := readBootstrap(cfg.BootstrapPath()); err == nil && boot.AdminToken != "" {
			s.adminToken = keys.Masked(boot.AdminToken)
		} else {
			s.adminToken = keys.Masked(randomBase64(24))
		}
	}
	return s, nil
}

func randomBase64(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return base64.StdEncoding.EncodeToString(b)
}

func readBootstrap(path string) (Bootstrap, error) {
	var b Bootstrap
	data, err := os.ReadFile(path)
	if err != nil {
		return b, err
	}
	return b, json.Unmarshal(data, &b)
}

// bootstrap reuses bootstrap.json when its account still exists, else
// creates a builder account, a paper credential and a test key; created
// says which.
func (g *Gateway) bootstrap(ctx context.Context, adminToken keys.Masked) (b Bootstrap, created bool, err error) {
	path := g.cfg.BootstrapPath()
	if b, err := readBootstrap(path); err == nil {
		if _, err := g.keys.Account(ctx, b.AccountID); err == nil {
			b.AdminToken = adminToken.Reveal()
			return b, false, nil
		}
		g.log.Warn("bootstrap.json names an account the store does not have; bootstrapping again", "path", path)
	}
	acct, err := g.keys.CreateAccount(ctx, contract.TierBuilder, "bootstrap")
	if err != nil {
		return Bootstrap{}, false, fmt.Errorf("bootstrap account: %w", err)
	}
	cred, err := g.keys.CreateCredential(ctx, acct.ID, keys.CredentialRequest{
		Exchange: contract.Paper, Env: contract.Testnet, Label: "paper", Secret: json.RawMessage(`{"startingBalance":"10000"}`),
	})
	if err != nil {
		return Bootstrap{}, false, fmt.Errorf("bootstrap credential: %w", err)
	}
	key, err := g.keys.CreateKey(ctx, acct.ID, keys.KeyRequest{Env: contract.KeyEnvTest})
	if err != nil {
		return Bootstrap{}, false, fmt.Errorf("bootstrap key: %w", err)
	}
	b = Bootstrap{AccountID: acct.ID, APIKey: key.Key.Reveal(), CredentialID: cred.ID, AdminToken: adminToken.Reveal()}
	data, _ := json.MarshalIndent(b, "", "  ")
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return b, true, fmt.Errorf("write %s: %w", path, err)
	}
	g.log.Info("bootstrapped", "account_id", acct.ID, "credential_id", cred.ID, "key_prefix", key.Info.Display)
	return b, true, nil
}

// printBanner tells a new user what they have and how to call it. The
// key is printed in full at the first start only, when it is created:
// later starts point to the file that holds it, so it does not reach every
// log the output is kept in.
func printBanner(w io.Writer, b Bootstrap, firstStart bool, url, adminURL, path string) {
	key, header := b.APIKey, "'X-API-Key: "+b.APIKey+"'"
	if !firstStart {
		key = "in " + path + " (printed at the first start only)"
		header = `"X-API-Key: $(jq -r .apiKey '` + path + `')"`
	}
	fmt.Fprintf(w, `
perpgate is running
  API:         %s/v1   (MCP: %s/mcp)
  admin API:   %s   (token in %s)
  account:     %s (builder tier)
  API key:     %s
  credential:  %s (paper exchange, testnet)

Try it:
  curl -s %s/v1 -H %s -H 'Content-Type: application/json' \
    -d '{"operation":"getMarkPrice","credentialId":"%s","market":"BTC-USD-PERP"}'

`, url, url, adminURL, path, b.AccountID, key, b.CredentialID, url, header, b.CredentialID)
}
