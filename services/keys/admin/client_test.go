package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/perpgate/perpgate/pkg/apikey"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys/admin"
)

func TestClient(t *testing.T) {
	srv, _, _ := newServer(t)
	ctx := context.Background()
	c := admin.NewClient(srv.URL+"/", testToken)

	acct, err := c.CreateAccount(ctx, contract.TierPro, "Acme")
	if err != nil || !acct.Success || acct.Tier != contract.TierPro || acct.Name != "Acme" {
		t.Fatalf("CreateAccount = %+v, %v", acct, err)
	}
	cred, err := c.CreateCredential(ctx, acct.ID, admin.CredentialRequest{
		Exchange: contract.Paper, Env: contract.Testnet, Label: "paper", Secret: json.RawMessage(`{"startingBalance":"500"}`),
	})
	if err != nil || !cred.Success || cred.ID == "" || cred.Exchange != contract.Paper {
		t.Fatalf("CreateCredential = %+v, %v", cred, err)
	}
	exp := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	key, err := c.CreateKey(ctx, acct.ID, admin.KeyRequest{
		Env: contract.KeyEnvTest, AllowedOperations: []string{contract.OpGetBalance},
		AllowedExchanges: []contract.Exchange{contract.Paper}, AllowedCredentials: []string{cred.ID}, ExpiresAt: &exp,
	})
	if err != nil || !key.Success || !apikey.WellFormed(key.Key) || key.Display != key.Key[:12] || !key.ExpiresAt.Equal(exp) ||
		len(key.AllowedCredentials) != 1 || key.AllowedCredentials[0] != cred.ID {
		t.Fatalf("CreateKey = %+v, %v", key.KeyView, err)
	}
	keys, err := c.ListKeys(ctx, acct.ID)
	if err != nil || len(keys.Keys) != 1 || keys.Keys[0].ID != key.ID {
		t.Fatalf("ListKeys = %+v, %v", keys, err)
	}
	creds, err := c.ListCredentials(ctx, acct.ID)
	if err != nil || len(creds.Credentials) != 1 || creds.Credentials[0] != cred.CredentialInfo {
		t.Fatalf("ListCredentials = %+v, %v", creds, err)
	}
	rev, err := c.RevokeKey(ctx, key.ID)
	if err != nil || rev.RevokedAt == nil {
		t.Fatalf("RevokeKey = %+v, %v", rev, err)
	}
	del, err := c.DeleteCredential(ctx, cred.ID)
	if err != nil || !del.Deleted || del.CredentialID != cred.ID {
		t.Fatalf("DeleteCredential = %+v, %v", del, err)
	}

	unknown := uuid.NewString()
	tests := []struct {
		name string
		call func() error
		code contract.Code
		msg  string
	}{
		{name: "wrong token", call: func() error {
			_, err := admin.NewClient(srv.URL, "bad").ListKeys(ctx, acct.ID)
			return err
		}, code: contract.CodeAdminUnauthorized},
		{name: "bad tier", call: func() error { _, err := c.CreateAccount(ctx, "gold", ""); return err }, code: contract.CodeInvalidRequest, msg: "gold"},
		{name: "key unknown account", call: func() error {
			_, err := c.CreateKey(ctx, unknown, admin.KeyRequest{Env: contract.KeyEnvLive})
			return err
		}, code: contract.CodeAccountNotFound},
		{name: "list keys unknown account", call: func() error { _, err := c.ListKeys(ctx, unknown); return err }, code: contract.CodeAccountNotFound},
		{name: "revoke unknown", call: func() error { _, err := c.RevokeKey(ctx, unknown); return err }, code: contract.CodeAPIKeyNotFound},
		{name: "credential bad shape", call: func() error {
			_, err := c.CreateCredential(ctx, acct.ID, admin.CredentialRequest{Exchange: contract.Binance, Env: contract.Mainnet, Secret: json.RawMessage(`{}`)})
			return err
		}, code: contract.CodeInvalidRequest, msg: `"apiKey" is required`},
		{name: "list credentials unknown account", call: func() error { _, err := c.ListCredentials(ctx, unknown); return err }, code: contract.CodeAccountNotFound},
		{name: "delete twice", call: func() error { _, err := c.DeleteCredential(ctx, cred.ID); return err }, code: contract.CodeCredentialNotFound},
		{name: "path escaping", call: func() error { _, err := c.RevokeKey(ctx, "../accounts"); return err }, code: contract.CodeAPIKeyNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var ce *contract.Error
			if !errors.As(err, &ce) || ce.Code != tt.code || !strings.Contains(ce.Message, tt.msg) {
				t.Fatalf("err = %v, want %s containing %q", err, tt.code, tt.msg)
			}
		})
	}

	t.Run("unreachable", func(t *testing.T) {
		_, err := admin.NewClient("http://127.0.0.1:1", testToken).ListKeys(ctx, acct.ID)
		var ce *contract.Error
		if err == nil || errors.As(err, &ce) {
			t.Fatalf("err = %v, want a transport error", err)
		}
	})
}
