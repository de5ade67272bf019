package okx

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/connector/venuekit"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Adapter implements connector.Adapter on OKX v5 USDT-margined swaps. It
// holds no venue state, only caches per REST base and environment:
// instrument rules, the last market list and account configurations.
type Adapter struct {
	cfg Config
	c   *client

	lists   venuekit.Catalog[instMeta]   // by scope: swaps and their contract rules by instId
	configs venuekit.Memo[accountConfig] // by scope + apiKey
}

var (
	_ connector.Adapter          = (*Adapter)(nil)
	_ connector.ProtectionLinker = (*Adapter)(nil)
	_ connector.LeverageReader   = (*Adapter)(nil)
	_ connector.Streamer         = (*Adapter)(nil)
	_ connector.AccountFeeder    = (*Adapter)(nil)
)

// configTTL is how long a credential's account configuration is trusted.
const configTTL = 5 * time.Minute

// NewAdapter returns an adapter for cfg; hc nil means connector.NewHTTPClient.
func NewAdapter(cfg Config, hc *http.Client) *Adapter {
	if hc == nil {
		hc = connector.NewHTTPClient(cfg.Timeout)
	}
	return &Adapter{cfg: cfg, c: newClient(cfg, hc)}
}

// Exchange implements connector.Adapter.
func (a *Adapter) Exchange() contract.Exchange { return contract.OKX }

// LinksProtection implements connector.ProtectionLinker: a TP+SL pair is
// one oco algo order (one leg firing cancels the other) and every
// protection order carries cxlOnClosePos, so OKX cancels it when the
// position closes (fact sheet §5 placeProtectionOrders).
func (a *Adapter) LinksProtection() bool { return true }

// Secret is an OKX credential's secret (DESIGN §5): the API key, its
// secret and the passphrase chosen when the key was created.
type Secret struct {
	APIKey     string `json:"apiKey"`
	APISecret  string `json:"apiSecret"`
	Passphrase string `json:"passphrase"`
}

// String masks the secret.
func (Secret) String() string { return "[secret]" }

// GoString masks the secret.
func (Secret) GoString() string { return "[secret]" }

// LogValue masks the secret in slog output.
func (Secret) LogValue() slog.Value { return slog.StringValue("[secret]") }

func credKeys(c connector.Credential) (*keys, error) {
	var s Secret
	if len(c.Secret) == 0 || c.Secret.Decode(&s) != nil || s.APIKey == "" || s.APISecret == "" || s.Passphrase == "" {
		return nil, contract.Upstream(contract.ReasonAuthenticationFailed, "", "", "%v: store apiKey, apiSecret and passphrase", errNoKeys)
	}
	return &keys{apiKey: s.APIKey, secret: s.APISecret, passphrase: s.Passphrase}, nil
}

func (a *Adapter) base(c connector.Credential) string { return a.cfg.BaseURL(c.Environment) }

// scope keys the caches: live and demo share a host but not instruments.
func (a *Adapter) scope(c connector.Credential) string {
	return a.base(c) + " " + string(c.Environment)
}

func demo(c connector.Credential) bool { return c.Environment == contract.Testnet }

// public calls an unsigned market-data endpoint.
func (a *Adapter) public(ctx context.Context, c connector.Credential, path string, q params, lim rule, out any) error {
	return a.c.do(ctx, a.base(c), nil, request{method: http.MethodGet, path: path, query: q, demo: demo(c), limit: lim, instID: instOf(q)}, out)
}

// get calls a private GET endpoint.
func (a *Adapter) get(ctx context.Context, c connector.Credential, path string, q params, lim rule, out any) error {
	k, err := credKeys(c)
	if err != nil {
		return err
	}
	return a.c.do(ctx, a.base(c), k, request{method: http.MethodGet, path: path, query: q, signed: true, demo: demo(c), limit: lim, instID: instOf(q)}, out)
}

// post calls a private POST endpoint with a JSON body.
func (a *Adapter) post(ctx context.Context, c connector.Credential, r request, out any) error {
	k, err := credKeys(c)
	if err != nil {
		return err
	}
	r.method, r.signed, r.demo = http.MethodPost, true, demo(c)
	return a.c.do(ctx, a.base(c), k, r, out)
}

func instOf(q params) string {
	for _, p := range q {
		if p.Key == "instId" {
			return p.Value
		}
	}
	return ""
}

func instParam(m connector.Market) params { return params{}.Add("instId", m.Native) }

// Markets implements connector.Adapter: the live linear USDT swaps.
func (a *Adapter) Markets(ctx context.Context, c connector.Credential) ([]connector.Market, error) {
	var insts []instrument
	if err := a.public(ctx, c, "/api/v5/public/instruments", params{}.Add("instType", "SWAP"), rule{n: 20}, &insts); err != nil {
		return nil, err
	}
	list, meta := marketsFromInstruments(insts)
	a.lists.Put(a.scope(c), list, meta)
	return list, nil
}

// inst returns an instrument's contract rules, reading the instruments
// when this adapter has not yet (the runtime may have cached the markets
// from another replica's answer).
func (a *Adapter) inst(ctx context.Context, c connector.Credential, instID string) (instMeta, error) {
	if im, ok := a.lists.Rules(a.scope(c), instID); ok {
		return im, nil
	}
	if _, err := a.Markets(ctx, c); err != nil {
		return instMeta{}, err
	}
	im, ok := a.lists.Rules(a.scope(c), instID)
	if !ok {
		return instMeta{}, contract.Errorf(contract.CodeUnknownMarket, "%s is not a live USDT swap on OKX", instID)
	}
	return im, nil
}
