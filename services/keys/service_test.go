package keys_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/perpgate/perpgate/pkg/apikey"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/keys"
)

func TestCreateAccount(t *testing.T) {
	f := newFixture(t, testConfig(), nil)
	ctx := context.Background()
	tests := []struct {
		name    string
		tier    contract.Tier
		acctNam string
		code    contract.Code
		msg     string
	}{
		{name: "free", tier: contract.TierFree},
		{name: "pro with name", tier: contract.TierPro, acctNam: "Acme Ltd"},
		{name: "unknown tier", tier: "gold", code: contract.CodeInvalidRequest, msg: `"gold"`},
		{name: "empty tier", tier: "", code: contract.CodeInvalidRequest, msg: "tier must be one of"},
		{name: "long name", tier: contract.TierFree, acctNam: strings.Repeat("n", 201), code: contract.CodeInvalidRequest, msg: "name must be at most 200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := f.svc.CreateAccount(ctx, tt.tier, tt.acctNam)
			if tt.code != "" {
				wantCode(t, err, tt.code, tt.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, perr := uuid.Parse(a.ID); perr != nil || a.Tier != tt.tier || a.Name != tt.acctNam || !a.CreatedAt.Equal(f.clock.Now().Truncate(time.Microsecond)) {
				t.Fatalf("account = %+v", a)
			}
			got, err := f.svc.Account(ctx, a.ID)
			if err != nil || got != a {
				t.Fatalf("Account = %+v, %v; want %+v", got, err, a)
			}
		})
	}
	t.Run("unknown account", func(t *testing.T) {
		_, err := f.svc.Account(ctx, uuid.NewString())
		wantCode(t, err, contract.CodeAccountNotFound, "not found")
	})
	t.Run("malformed account id", func(t *testing.T) {
		_, err := f.svc.Account(ctx, "nope")
		wantCode(t, err, contract.CodeAccountNotFound, `"nope"`)
	})
}

func TestCreateKey(t *testing.T) {
	f := newFixture(t, testConfig(), nil)
	ctx := context.Background()
	acct := f.account(t, contract.TierPro)
	other := f.account(t, contract.TierPro)
	cred, err := f.svc.CreateCredential(ctx, acct.ID, keys.CredentialRequest{Exchange: contract.Paper, Env: contract.Testnet})
	if err != nil {
		t.Fatal(err)
	}
	otherCred, err := f.svc.CreateCredential(ctx, other.ID, keys.CredentialRequest{Exchange: contract.Paper, Env: contract.Testnet})
	if err != nil {
		t.Fatal(err)
	}
	deletedCred, err := f.svc.CreateCredential(ctx, acct.ID, keys.CredentialRequest{Exchange: contract.Paper, Env: contract.Testnet})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.DeleteCredential(ctx, deletedCred.ID); err != nil {
		t.Fatal(err)
	}
	future := f.clock.Now().Add(time.Hour)
	past := f.clock.Now().Add(-time.Second)
	now := f.clock.Now()

	tests := []struct {
		name    string
		account string
		req     keys.KeyRequest
		code    contract.Code
		msg     string
	}{
		{name: "live unscoped", account: acct.ID, req: keys.KeyRequest{Env: contract.KeyEnvLive}},
		{name: "test fully scoped", account: acct.ID, req: keys.KeyRequest{
			Env:                contract.KeyEnvTest,
			AllowedOperations:  []string{contract.OpGetBalance, contract.OpPlaceLimitOrder},
			AllowedExchanges:   []contract.Exchange{contract.Paper},
			AllowedCredentials: []string{strings.ToUpper(cred.ID)},
			ExpiresAt:          &future,
		}},
		{name: "bad env", account: acct.ID, req: keys.KeyRequest{Env: "mainnet"}, code: contract.CodeInvalidRequest, msg: `"mainnet"`},
		{name: "missing env", account: acct.ID, req: keys.KeyRequest{}, code: contract.CodeInvalidRequest, msg: "env must be"},
		{name: "unknown operation", account: acct.ID, req: keys.KeyRequest{Env: contract.KeyEnvLive, AllowedOperations: []string{"getBalance", "withdraw"}}, code: contract.CodeInvalidRequest, msg: `"withdraw" is not an operation`},
		{name: "snake case operation", account: acct.ID, req: keys.KeyRequest{Env: contract.KeyEnvLive, AllowedOperations: []string{"get_balance"}}, code: contract.CodeInvalidRequest, msg: `"get_balance"`},
		{name: "unknown exchange", account: acct.ID, req: keys.KeyRequest{Env: contract.KeyEnvLive, AllowedExchanges: []contract.Exchange{"kraken"}}, code: contract.CodeInvalidRequest, msg: `"kraken" is not a supported exchange`},
		{name: "credential not a uuid", account: acct.ID, req: keys.KeyRequest{Env: contract.KeyEnvLive, AllowedCredentials: []string{"abc"}}, code: contract.CodeInvalidRequest, msg: `"abc" is not a UUID`},
		{name: "unknown credential", account: acct.ID, req: keys.KeyRequest{Env: contract.KeyEnvLive, AllowedCredentials: []string{uuid.NewString()}}, code: contract.CodeInvalidRequest, msg: "is not a credential of account"},
		{name: "another account's credential", account: acct.ID, req: keys.KeyRequest{Env: contract.KeyEnvLive, AllowedCredentials: []string{otherCred.ID}}, code: contract.CodeInvalidRequest, msg: otherCred.ID},
		{name: "deleted credential", account: acct.ID, req: keys.KeyRequest{Env: contract.KeyEnvLive, AllowedCredentials: []string{deletedCred.ID}}, code: contract.CodeInvalidRequest, msg: deletedCred.ID},
		{name: "expiry in the past", account: acct.ID, req: keys.KeyRequest{Env: contract.KeyEnvLive, ExpiresAt: &past}, code: contract.CodeInvalidRequest, msg: "is not in the future"},
		{name: "expiry now", account: acct.ID, req: keys.KeyRequest{Env: contract.KeyEnvLive, ExpiresAt: &now}, code: contract.CodeInvalidRequest, msg: "is not in the future"},
		{name: "unknown account", account: uuid.NewString(), req: keys.KeyRequest{Env: contract.KeyEnvLive}, code: contract.CodeAccountNotFound},
		{name: "malformed account", account: "x", req: keys.KeyRequest{Env: contract.KeyEnvLive}, code: contract.CodeAccountNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := f.svc.CreateKey(ctx, tt.account, tt.req)
			if tt.code != "" {
				ce := wantCode(t, err, tt.code, tt.msg)
				if ce.Status() != tt.code.Status() {
					t.Fatalf("status = %d", ce.Status())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			full := k.Key.Reveal()
			env, _ := apikey.Parse(full)
			if !apikey.WellFormed(full) || string(env) != string(tt.req.Env) {
				t.Fatalf("key %s is not a well-formed %s key", k.Key, tt.req.Env)
			}
			if k.Info.Hash != apikey.Hash(full) || k.Info.Display != full[:12] || k.Info.Tier != contract.TierPro || k.Info.AccountID != acct.ID {
				t.Fatalf("info = %+v", k.Info)
			}
			if len(tt.req.AllowedCredentials) > 0 && k.Info.AllowedCredentials[0] != cred.ID {
				t.Fatalf("allowed credentials = %v, want canonical %s", k.Info.AllowedCredentials, cred.ID)
			}
			got, err := f.svc.LookupKey(ctx, k.Info.Hash)
			if err != nil {
				t.Fatal(err)
			}
			assertKey(t, got, k.Info)
		})
	}
}

func TestKeyQuota(t *testing.T) {
	tests := []struct {
		tier contract.Tier
		max  int
	}{
		{tier: contract.TierFree, max: 3},
		{tier: contract.TierBuilder, max: 10},
		{tier: contract.TierPro, max: 25},
	}
	for _, tt := range tests {
		t.Run(string(tt.tier), func(t *testing.T) {
			f := newFixture(t, testConfig(), nil)
			ctx := context.Background()
			acct := f.account(t, tt.tier)
			var first keys.NewKey
			for i := range tt.max {
				k, err := f.svc.CreateKey(ctx, acct.ID, keys.KeyRequest{Env: contract.KeyEnvTest})
				if err != nil {
					t.Fatalf("key %d: %v", i+1, err)
				}
				if i == 0 {
					first = k
				}
			}
			_, err := f.svc.CreateKey(ctx, acct.ID, keys.KeyRequest{Env: contract.KeyEnvTest})
			ce := wantCode(t, err, contract.CodeKeyLimitReached, "revoke one first")
			if ce.Status() != 409 {
				t.Fatalf("status = %d, want 409", ce.Status())
			}
			if _, err := f.svc.RevokeKey(ctx, first.Info.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := f.svc.CreateKey(ctx, acct.ID, keys.KeyRequest{Env: contract.KeyEnvTest}); err != nil {
				t.Fatalf("after revoking one: %v", err)
			}
			list, err := f.svc.ListKeys(ctx, acct.ID)
			if err != nil || len(list) != tt.max+1 {
				t.Fatalf("ListKeys = %d, %v; want %d (revoked included)", len(list), err, tt.max+1)
			}
		})
	}
}

func TestLookupKey(t *testing.T) {
	f := newFixture(t, testConfig(), nil)
	ctx := context.Background()
	acct := f.account(t, contract.TierBuilder)
	exp := f.clock.Now().Add(time.Minute)
	k, err := f.svc.CreateKey(ctx, acct.ID, keys.KeyRequest{Env: contract.KeyEnvLive, ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Hour) // now expired: still returned, the edge decides KEY_EXPIRED
	got, err := f.svc.LookupKey(ctx, k.Key.Hash())
	if err != nil || got.ExpiresAt == nil || got.Tier != contract.TierBuilder {
		t.Fatalf("expired key = %+v, %v", got, err)
	}
	revoked, err := f.svc.RevokeKey(ctx, k.Info.ID)
	if err != nil || revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(f.clock.Now().Truncate(time.Microsecond)) {
		t.Fatalf("RevokeKey = %+v, %v", revoked, err)
	}
	got, err = f.svc.LookupKey(ctx, k.Key.Hash())
	if err != nil || got.RevokedAt == nil {
		t.Fatalf("revoked key = %+v, %v; want it with RevokedAt", got, err)
	}

	tests := []struct {
		name string
		call func() error
		code contract.Code
	}{
		{name: "unknown hash", call: func() error { _, err := f.svc.LookupKey(ctx, apikey.Hash("mt_test_nope")); return err }, code: contract.CodeInvalidAPIKey},
		{name: "not a hash", call: func() error { _, err := f.svc.LookupKey(ctx, "zz"); return err }, code: contract.CodeInvalidAPIKey},
		{name: "revoke unknown", call: func() error { _, err := f.svc.RevokeKey(ctx, uuid.NewString()); return err }, code: contract.CodeAPIKeyNotFound},
		{name: "revoke malformed", call: func() error { _, err := f.svc.RevokeKey(ctx, "k1"); return err }, code: contract.CodeAPIKeyNotFound},
		{name: "list unknown account", call: func() error { _, err := f.svc.ListKeys(ctx, uuid.NewString()); return err }, code: contract.CodeAccountNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantCode(t, tt.call(), tt.code, "") })
	}
}

// Secret values used by the shape tests; none may ever appear in a message.
const (
	secretAPIKey   = "AKsecretvalue12345"
	secretAPISec   = "SKsupersecret98765"
	secretPass     = "PPpassphrase4242"
	hlAddr         = "0x1111111111111111111111111111111111111111"
	hlAgentKey     = "0xabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdef0123"
	paradexAddr    = "0x04a1b2c3d4e5f6"
	paradexStarkPK = "0x0777777777777777777777777777777777777777777777777777777777777777"
	asterUser      = "0x1400C59765bcf62EBbcc03893e9F13B5E9668B80" // EIP-55 mixed case
)

var secretValues = []string{secretAPIKey, secretAPISec, secretPass, hlAgentKey, hlAgentKey[2:], paradexStarkPK, "deadbeefdeadbeef"}

func TestCreateCredential(t *testing.T) {
	f := newFixture(t, testConfig(), nil)
	ctx := context.Background()
	acct := f.account(t, contract.TierFree)
	tests := []struct {
		name   string
		x      contract.Exchange
		env    contract.Environment
		label  string
		secret string
		code   contract.Code
		msg    string
	}{
		{name: "binance", x: contract.Binance, env: contract.Mainnet, secret: `{"apiKey":"` + secretAPIKey + `","apiSecret":"` + secretAPISec + `"}`},
		{name: "bybit testnet", x: contract.Bybit, env: contract.Testnet, label: "bot", secret: `{"apiKey":"` + secretAPIKey + `","apiSecret":"` + secretAPISec + `"}`},
		{name: "bybit demo", x: contract.Bybit, env: contract.Testnet, secret: `{"apiKey":"` + secretAPIKey + `","apiSecret":"` + secretAPISec + `","demo":true}`},
		{name: "okx", x: contract.OKX, env: contract.Mainnet, secret: `{"apiKey":"` + secretAPIKey + `","apiSecret":"` + secretAPISec + `","passphrase":"` + secretPass + `"}`},
		{name: "hyperliquid", x: contract.Hyperliquid, env: contract.Mainnet, secret: `{"accountAddress":"` + hlAddr + `","agentPrivateKey":"` + hlAgentKey + `"}`},
		{name: "hyperliquid bare key and vault", x: contract.Hyperliquid, env: contract.Testnet, secret: `{"accountAddress":"` + hlAddr + `","agentPrivateKey":"` + hlAgentKey[2:] + `","vaultAddress":"` + hlAddr + `"}`},
		{name: "paradex", x: contract.Paradex, env: contract.Testnet, secret: `{"accountAddress":"` + paradexAddr + `","starkPrivateKey":"` + paradexStarkPK + `"}`},
		{name: "aster", x: contract.Aster, env: contract.Mainnet, secret: `{"userAddress":"` + asterUser + `","signerPrivateKey":"` + hlAgentKey + `"}`},
		{name: "aster lower case, bare key", x: contract.Aster, env: contract.Testnet, secret: `{"userAddress":"` + strings.ToLower(asterUser) + `","signerPrivateKey":"` + hlAgentKey[2:] + `"}`},
		{name: "paper empty", x: contract.Paper, env: contract.Testnet, secret: `{}`},
		{name: "paper no secret", x: contract.Paper, env: contract.Testnet},
		{name: "paper balance string", x: contract.Paper, env: contract.Testnet, secret: `{"startingBalance":"2500.50"}`},
		{name: "paper balance number", x: contract.Paper, env: contract.Testnet, secret: `{"startingBalance":2500}`},

		{name: "paper mainnet", x: contract.Paper, env: contract.Mainnet, secret: `{}`, code: contract.CodeInvalidRequest, msg: `paper credentials must use env "testnet"`},
		{name: "unknown exchange", x: "kraken", env: contract.Mainnet, secret: `{}`, code: contract.CodeInvalidRequest, msg: `"kraken" is not supported`},
		{name: "bad env", x: contract.Binance, env: "live", secret: `{}`, code: contract.CodeInvalidRequest, msg: `env must be "mainnet" or "testnet"`},
		{name: "long label", x: contract.Paper, env: contract.Testnet, label: strings.Repeat("l", 201), code: contract.CodeInvalidRequest, msg: "label"},
		{name: "binance missing apiSecret", x: contract.Binance, env: contract.Mainnet, secret: `{"apiKey":"` + secretAPIKey + `"}`, code: contract.CodeInvalidRequest, msg: `"apiSecret" is required for binance`},
		{name: "okx missing passphrase", x: contract.OKX, env: contract.Mainnet, secret: `{"apiKey":"` + secretAPIKey + `","apiSecret":"` + secretAPISec + `"}`, code: contract.CodeInvalidRequest, msg: `"passphrase" is required for okx`},
		{name: "unknown field", x: contract.Bybit, env: contract.Mainnet, secret: `{"apiKey":"` + secretAPIKey + `","apiSecret":"` + secretAPISec + `","passphrase":"` + secretPass + `"}`, code: contract.CodeInvalidRequest, msg: `"passphrase" is not accepted for bybit`},
		{name: "bybit demo as string", x: contract.Bybit, env: contract.Testnet, secret: `{"apiKey":"` + secretAPIKey + `","apiSecret":"` + secretAPISec + `","demo":"yes"}`, code: contract.CodeInvalidRequest, msg: `"demo" for bybit must be true or false`},
		{name: "bybit demo on mainnet", x: contract.Bybit, env: contract.Mainnet, secret: `{"apiKey":"` + secretAPIKey + `","apiSecret":"` + secretAPISec + `","demo":true}`, code: contract.CodeInvalidRequest, msg: `env "testnet"`},
		{name: "number where string", x: contract.Binance, env: contract.Mainnet, secret: `{"apiKey":12345678,"apiSecret":"` + secretAPISec + `"}`, code: contract.CodeInvalidRequest, msg: `"apiKey" for binance must be a string`},
		{name: "empty value", x: contract.Binance, env: contract.Mainnet, secret: `{"apiKey":"","apiSecret":"` + secretAPISec + `"}`, code: contract.CodeInvalidRequest, msg: `"apiKey" for binance must not be empty`},
		{name: "null required", x: contract.Binance, env: contract.Mainnet, secret: `{"apiKey":null,"apiSecret":"` + secretAPISec + `"}`, code: contract.CodeInvalidRequest, msg: `"apiKey" is required`},
		{name: "whitespace", x: contract.Binance, env: contract.Mainnet, secret: `{"apiKey":" ` + secretAPIKey + `","apiSecret":"` + secretAPISec + `"}`, code: contract.CodeInvalidRequest, msg: "whitespace"},
		{name: "secret not an object", x: contract.Binance, env: contract.Mainnet, secret: `["` + secretAPIKey + `"]`, code: contract.CodeInvalidRequest, msg: "secret must be a JSON object"},
		{name: "secret a string", x: contract.Binance, env: contract.Mainnet, secret: `"` + secretAPISec + `"`, code: contract.CodeInvalidRequest, msg: "secret must be a JSON object"},
		{name: "hyperliquid short address", x: contract.Hyperliquid, env: contract.Mainnet, secret: `{"accountAddress":"0x1234","agentPrivateKey":"` + hlAgentKey + `"}`, code: contract.CodeInvalidRequest, msg: `"accountAddress" for hyperliquid must be 0x followed by 40 hex`},
		{name: "hyperliquid bad agent key", x: contract.Hyperliquid, env: contract.Mainnet, secret: `{"accountAddress":"` + hlAddr + `","agentPrivateKey":"` + hlAgentKey[:40] + `"}`, code: contract.CodeInvalidRequest, msg: `"agentPrivateKey" for hyperliquid must be 64 hex`},
		{name: "hyperliquid non-hex agent key", x: contract.Hyperliquid, env: contract.Mainnet, secret: `{"accountAddress":"` + hlAddr + `","agentPrivateKey":"0x` + strings.Repeat("g", 64) + `"}`, code: contract.CodeInvalidRequest, msg: `"agentPrivateKey"`},
		{name: "hyperliquid bad vault", x: contract.Hyperliquid, env: contract.Mainnet, secret: `{"accountAddress":"` + hlAddr + `","agentPrivateKey":"` + hlAgentKey + `","vaultAddress":"deadbeefdeadbeef"}`, code: contract.CodeInvalidRequest, msg: `"vaultAddress"`},
		{name: "hyperliquid missing agent", x: contract.Hyperliquid, env: contract.Mainnet, secret: `{"accountAddress":"` + hlAddr + `"}`, code: contract.CodeInvalidRequest, msg: `"agentPrivateKey" is required`},
		{name: "paradex key above the curve order", x: contract.Paradex, env: contract.Mainnet, secret: `{"accountAddress":"` + paradexAddr + `","starkPrivateKey":"0x0800000000000010ffffffffffffffffb781126dcae7b2321e66a241adc64d2f"}`, code: contract.CodeInvalidRequest, msg: `"starkPrivateKey" for paradex must be a Stark private key`},
		{name: "paradex key zero", x: contract.Paradex, env: contract.Mainnet, secret: `{"accountAddress":"` + paradexAddr + `","starkPrivateKey":"0x0"}`, code: contract.CodeInvalidRequest, msg: "Stark private key"},
		{name: "paradex address not a felt", x: contract.Paradex, env: contract.Mainnet, secret: `{"accountAddress":"0x0800000000000011000000000000000000000000000000000000000000000001","starkPrivateKey":"` + paradexStarkPK + `"}`, code: contract.CodeInvalidRequest, msg: `"accountAddress" for paradex must be a Starknet address`},
		{name: "paradex no 0x", x: contract.Paradex, env: contract.Mainnet, secret: `{"accountAddress":"` + paradexAddr + `","starkPrivateKey":"` + paradexStarkPK[2:] + `"}`, code: contract.CodeInvalidRequest, msg: `"starkPrivateKey" for paradex must be 0x`},
		{name: "paradex unknown field", x: contract.Paradex, env: contract.Mainnet, secret: `{"accountAddress":"` + paradexAddr + `","starkPrivateKey":"` + paradexStarkPK + `","` + paradexStarkPK + `":"x"}`, code: contract.CodeInvalidRequest, msg: "secret field (name not shown: not a short identifier) is not accepted for paradex"},
		{name: "aster checksum typo", x: contract.Aster, env: contract.Mainnet, secret: `{"userAddress":"` + strings.Replace(asterUser, "C5", "c5", 1) + `","signerPrivateKey":"` + hlAgentKey + `"}`, code: contract.CodeInvalidRequest, msg: `"userAddress" for aster must be a checksummed (EIP-55) or lowercase 0x address`},
		{name: "aster short key", x: contract.Aster, env: contract.Mainnet, secret: `{"userAddress":"` + asterUser + `","signerPrivateKey":"` + hlAgentKey[:40] + `"}`, code: contract.CodeInvalidRequest, msg: `"signerPrivateKey" for aster must be 64 hex`},
		{name: "aster key zero", x: contract.Aster, env: contract.Mainnet, secret: `{"userAddress":"` + asterUser + `","signerPrivateKey":"0x` + strings.Repeat("0", 64) + `"}`, code: contract.CodeInvalidRequest, msg: `"signerPrivateKey"`},
		{name: "aster signer address instead of key", x: contract.Aster, env: contract.Mainnet, secret: `{"userAddress":"` + asterUser + `","signerPrivateKey":"` + hlAddr + `"}`, code: contract.CodeInvalidRequest, msg: `"signerPrivateKey" for aster must be 64 hex`},
		{name: "aster missing user", x: contract.Aster, env: contract.Mainnet, secret: `{"signerPrivateKey":"` + hlAgentKey + `"}`, code: contract.CodeInvalidRequest, msg: `"userAddress" is required for aster`},
		{name: "paper zero balance", x: contract.Paper, env: contract.Testnet, secret: `{"startingBalance":"0.00"}`, code: contract.CodeInvalidRequest, msg: `"startingBalance" for paper must be a positive decimal`},
		{name: "paper negative balance", x: contract.Paper, env: contract.Testnet, secret: `{"startingBalance":-5}`, code: contract.CodeInvalidRequest, msg: "positive decimal"},
		{name: "paper bool balance", x: contract.Paper, env: contract.Testnet, secret: `{"startingBalance":true}`, code: contract.CodeInvalidRequest, msg: "must be a string or a number"},
		{name: "paper unknown field", x: contract.Paper, env: contract.Testnet, secret: `{"apiKey":"` + secretAPIKey + `"}`, code: contract.CodeInvalidRequest, msg: `"apiKey" is not accepted for paper`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := keys.CredentialRequest{Exchange: tt.x, Env: tt.env, Label: tt.label}
			if tt.secret != "" {
				req.Secret = json.RawMessage(tt.secret)
			}
			info, err := f.svc.CreateCredential(ctx, acct.ID, req)
			if tt.code != "" {
				ce := wantCode(t, err, tt.code, tt.msg)
				for _, v := range secretValues {
					if strings.Contains(ce.Message, v) || strings.Contains(ce.Message, v[:12]) {
						t.Fatalf("message %q echoes a secret value", ce.Message)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if info.Exchange != tt.x || info.Environment != tt.env || info.Label != tt.label || info.AccountID != acct.ID {
				t.Fatalf("info = %+v", info)
			}
			got, err := f.svc.LookupCredential(ctx, info.ID)
			if err != nil || got != info {
				t.Fatalf("LookupCredential = %+v, %v; want %+v", got, err, info)
			}
			rel, err := f.svc.ReleaseSecret(ctx, tt.x, info.ID)
			if err != nil {
				t.Fatal(err)
			}
			var want, have map[string]any
			if tt.secret == "" {
				tt.secret = "{}"
			}
			if err := json.Unmarshal([]byte(tt.secret), &want); err != nil {
				t.Fatal(err)
			}
			if err := rel.Secret.Decode(&have); err != nil {
				t.Fatal(err)
			}
			for k, v := range want {
				if s, ok := v.(float64); ok {
					v = strings.TrimSuffix(strings.TrimSuffix(json.Number(formatFloat(s)).String(), ".0"), ".")
				}
				if have[k] != v {
					t.Fatalf("released %s = %v, want %v", k, have[k], v)
				}
			}
		})
	}
	t.Run("unknown account", func(t *testing.T) {
		_, err := f.svc.CreateCredential(ctx, uuid.NewString(), keys.CredentialRequest{Exchange: contract.Paper, Env: contract.Testnet})
		wantCode(t, err, contract.CodeAccountNotFound, "")
	})
	t.Run("logs hold no secret", func(t *testing.T) {
		for _, v := range secretValues {
			if strings.Contains(f.logs.String(), v) {
				t.Fatalf("logs contain secret value %q", v)
			}
		}
	})
}

func formatFloat(f float64) string { b, _ := json.Marshal(f); return string(b) }

func TestCredentialLifecycle(t *testing.T) {
	f := newFixture(t, testConfig(), nil)
	ctx := context.Background()
	acct := f.account(t, contract.TierFree)
	secret := `{"apiKey":"` + secretAPIKey + `","apiSecret":"` + secretAPISec + `"}`
	c, err := f.svc.CreateCredential(ctx, acct.ID, keys.CredentialRequest{Exchange: contract.Binance, Env: contract.Mainnet, Label: "main", Secret: json.RawMessage(secret)})
	if err != nil {
		t.Fatal(err)
	}
	list, err := f.svc.ListCredentials(ctx, acct.ID)
	if err != nil || len(list) != 1 || list[0] != c {
		t.Fatalf("ListCredentials = %+v, %v", list, err)
	}
	if _, err := f.svc.ReleaseSecret(ctx, contract.Bybit, c.ID); err == nil {
		t.Fatal("secret released to another exchange")
	} else {
		wantCode(t, err, contract.CodeCredentialNotFound, "")
	}
	if err := f.svc.DeleteCredential(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func() error
		code contract.Code
	}{
		{name: "lookup deleted", call: func() error { _, err := f.svc.LookupCredential(ctx, c.ID); return err }, code: contract.CodeCredentialNotFound},
		{name: "release deleted", call: func() error { _, err := f.svc.ReleaseSecret(ctx, contract.Binance, c.ID); return err }, code: contract.CodeCredentialNotFound},
		{name: "delete twice", call: func() error { return f.svc.DeleteCredential(ctx, c.ID) }, code: contract.CodeCredentialNotFound},
		{name: "delete malformed", call: func() error { return f.svc.DeleteCredential(ctx, "c1") }, code: contract.CodeCredentialNotFound},
		{name: "lookup malformed", call: func() error { _, err := f.svc.LookupCredential(ctx, "c1"); return err }, code: contract.CodeCredentialNotFound},
		{name: "list unknown account", call: func() error { _, err := f.svc.ListCredentials(ctx, uuid.NewString()); return err }, code: contract.CodeAccountNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantCode(t, tt.call(), tt.code, "") })
	}
	list, err = f.svc.ListCredentials(ctx, acct.ID)
	if err != nil || len(list) != 0 {
		t.Fatalf("ListCredentials after delete = %+v, %v; want none", list, err)
	}
}

func TestNew(t *testing.T) {
	store := newFileStore(t)
	bad := testConfig()
	bad.MasterKey = ""
	tests := []struct {
		name  string
		cfg   keys.Config
		store keys.Store
		msg   string
	}{
		{name: "invalid config", cfg: bad, store: store, msg: "PERPGATE_MASTER_KEY is required"},
		{name: "no store", cfg: testConfig(), store: nil, msg: "store is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := keys.New(tt.cfg, nil, tt.store, nil, nil)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %q", err, tt.msg)
			}
		})
	}
}
