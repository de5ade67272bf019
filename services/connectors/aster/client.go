package aster

import (
	"context"
	"net/http"
	"strconv"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/fapi"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/aster/sign"
)

// keys are what signs for a credential (fact sheet §2.1): the user (main
// wallet) address, the API wallet's key and its address, the signer, and
// the EIP-712 chain id of the credential's environment.
type keys struct {
	user   string
	signer string
	key    *secp256k1.PrivateKey
	chain  int64
}

// secret is an Aster credential's secret (DESIGN §13): the main wallet's
// address and the API wallet's private key; the signer is derived.
type secret struct {
	UserAddress      string `json:"userAddress"`
	SignerPrivateKey string `json:"signerPrivateKey"`
}

// credKeys reads a credential's secret; its errors never show the key.
func credKeys(c connector.Credential) (*keys, error) {
	var s secret
	if len(c.Secret) == 0 || c.Secret.Decode(&s) != nil || sign.CheckAddress(s.UserAddress) != nil {
		return nil, connector.BadSecret(contract.Aster)
	}
	key, err := sign.ParsePrivateKey(s.SignerPrivateKey)
	if err != nil {
		return nil, connector.BadSecret(contract.Aster)
	}
	return &keys{user: s.UserAddress, signer: sign.Address(key.PubKey()), key: key, chain: chainID(c.Environment)}, nil
}

// newClient is the REST client: per host Aster's clock (nonces must fall
// within a window of it) and the request-weight budget. A signed request
// refused for its nonce (-1021 ahead of the server, -4225 stale or
// repeated) is retried once; an error page that is not JSON leaves the
// outcome unknown.
func newClient(cfg Config, hc *http.Client) *fapi.Client[*keys] {
	nonces := cfg.Nonces
	if nonces == nil {
		nonces = NewNonces()
	}
	return &fapi.Client[*keys]{HTTP: venuekit.HTTP{Venue: "Aster", Client: hc}, Now: cfg.Clock(), Wait: connector.SleepContext,
		Errors: venueErrors, Prefix: prefix, Stale: []int{-1021, -4225}, NotJSON: true, Keys: credKeys,
		Base: func(c connector.Credential) string { return cfg.BaseURL(c.Environment) },
		Build: func(ctx context.Context, s *fapi.Server, k *keys, r fapi.Request) (*http.Request, error) {
			return request(ctx, nonces, s, k, r)
		}}
}

// signedPayload puts nonce, user and signer before the parameters (ccxt's
// order) and returns the string to send, signature last (fact sheet §2.2).
func signedPayload(p connector.Query, k *keys, nonce uint64) string {
	msg := connector.Query{}.Add("nonce", strconv.FormatUint(nonce, 10)).Add("user", k.user).Add("signer", k.signer)
	q := append(msg, p...).Encode()
	return q + "&signature=" + sign.Sign(k.key, q, k.chain)
}

// request is r, signed when it must be with a nonce at the host's clock:
// GET carries the parameters in the query, POST, PUT and DELETE in a form
// body (fact sheet §2.2: never split between the two).
func request(ctx context.Context, nonces venuekit.ClockedNonces, s *fapi.Server, k *keys, r fapi.Request) (*http.Request, error) {
	q := r.Params.Encode()
	if r.Signed {
		nonce, err := nonces.NextAt(ctx, k.signer, s.Clock.Now())
		if err != nil {
			return nil, contract.Errorf(contract.CodeServiceUnavailable,
				"no nonce for the Aster request: the shared nonce counter (Redis) is unreachable: %v", err)
		}
		q = signedPayload(r.Params, k, nonce)
	}
	return fapi.FormRequest(ctx, s, r, q, false)
}
