package standalone

import (
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/perpgate/perpgate/pkg/connector"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/telemetry"
	"github.com/perpgate/perpgate/services/connectors/binance"
	"github.com/perpgate/perpgate/services/connectors/bybit"
	"github.com/perpgate/perpgate/services/connectors/hyperliquid"
	"github.com/perpgate/perpgate/services/connectors/okx"
	"github.com/perpgate/perpgate/services/connectors/paradex"
	"github.com/perpgate/perpgate/services/edge"
	"github.com/perpgate/perpgate/services/keys"
)

// Config configures `perpgate serve`. External infrastructure is used when
// its URL is set; otherwise the embedded default.
type Config struct {
	DataDir     string             // PERPGATE_DATA_DIR
	AdminAddr   string             // PERPGATE_ADMIN_ADDR
	AdminToken  keys.Masked        // PERPGATE_ADMIN_TOKEN; generated and kept in bootstrap.json when unset
	MasterKey   keys.Masked        // PERPGATE_MASTER_KEY; generated and kept in DataDir/master.key when unset
	NATSURL     string             // PERPGATE_NATS_URL; empty runs an embedded server
	NATSAuth    bus.Auth           // PERPGATE_NATS_USER, PERPGATE_NATS_PASSWORD, PERPGATE_NATS_INBOX_PREFIX (external NATS)
	NATSListen  string             // PERPGATE_NATS_LISTEN: let outside clients reach the embedded server
	RedisURL    string             // PERPGATE_REDIS_URL; empty uses the in-process limiter and idempotency store
	DatabaseURL string             // PERPGATE_DATABASE_URL; empty uses the file store in DataDir
	PaperSeed   int64              // PERPGATE_PAPER_SEED: seed of the paper price walk
	PaperNow    func() time.Time   // the paper venue's clock (tests); nil: time.Now
	Hyperliquid hyperliquid.Config // PERPGATE_HYPERLIQUID_*
	Edge        edge.Config
	Log         telemetry.LogConfig
	Binance     binance.Config // PERPGATE_BINANCE_URL, PERPGATE_BINANCE_RECV_WINDOW
	Bybit       bybit.Config   // PERPGATE_BYBIT_URL, PERPGATE_BYBIT_RECV_WINDOW
	OKX         okx.Config     // PERPGATE_OKX_URL, PERPGATE_OKX_EXP_TIME
	Paradex     paradex.Config // PERPGATE_PARADEX_*
	// Stream tunes the market-data stream view (PERPGATE_STREAM*).
	Stream connector.StreamConfig
	// Guards tunes how key guards value orders (PERPGATE_MARKET_SLIPPAGE_BPS).
	Guards connector.GuardConfig
	// AccountFeeds tunes the private feeds of venues that push account
	// events (PERPGATE_EVENTS_IDLE); their events go where Edge.Events says.
	AccountFeeds connector.AccountFeedConfig
	// AuditRetention bounds the audit trail (PERPGATE_AUDIT_RETENTION,
	// PERPGATE_AUDIT_MAX_MB).
	AuditRetention keys.AuditRetention
	// Exchanges are the exchanges served (PERPGATE_EXCHANGES, comma
	// separated); empty serves every one built in. Calls for one left out
	// answer EXCHANGE_UNAVAILABLE.
	Exchanges []contract.Exchange
	// NATSPasswords are the passwords of the embedded server's users when
	// it listens (NATS_<USER>_PASSWORD, as deploy/nats.conf reads them);
	// generated into the data dir when unset and the address is loopback.
	NATSPasswords map[string]bus.Password
}

// BuiltIn are the exchanges perpgate serve has connectors for.
var BuiltIn = []contract.Exchange{contract.Paper, contract.Binance, contract.Bybit, contract.OKX, contract.Paradex, contract.Hyperliquid}

// serves reports whether the gateway runs x's connector.
func (c Config) serves(x contract.Exchange) bool {
	return len(c.Exchanges) == 0 || slices.Contains(c.Exchanges, x)
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		DataDir:        ".perpgate",
		AdminAddr:      "127.0.0.1:8081",
		PaperSeed:      1,
		Hyperliquid:    hyperliquid.DefaultConfig(),
		Binance:        binance.DefaultConfig(),
		Bybit:          bybit.DefaultConfig(),
		OKX:            okx.DefaultConfig(),
		Paradex:        paradex.DefaultConfig(),
		Edge:           edge.DefaultConfig(),
		Log:            telemetry.LogConfig{Format: "text", Level: "info"},
		Guards:         connector.DefaultGuardConfig(),
		AuditRetention: keys.DefaultAuditRetention(),
	}
}

// LoadConfig reads the PERPGATE_* environment through lookup; it reports
// every problem at once.
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	c := DefaultConfig()
	var errs []error
	str := func(name string, dst *string) {
		if v, ok := lookup(name); ok && v != "" {
			*dst = v
		}
	}
	str("PERPGATE_DATA_DIR", &c.DataDir)
	str("PERPGATE_ADMIN_ADDR", &c.AdminAddr)
	str("PERPGATE_NATS_URL", &c.NATSURL)
	str("PERPGATE_NATS_LISTEN", &c.NATSListen)
	str("PERPGATE_REDIS_URL", &c.RedisURL)
	str("PERPGATE_DATABASE_URL", &c.DatabaseURL)
	if v, ok := lookup("PERPGATE_ADMIN_TOKEN"); ok {
		c.AdminToken = keys.Masked(v)
	}
	if v, ok := lookup("PERPGATE_MASTER_KEY"); ok {
		c.MasterKey = keys.Masked(v)
	}
	if v, ok := lookup("PERPGATE_EXCHANGES"); ok && v != "" {
		for _, x := range strings.Split(v, ",") {
			c.Exchanges = append(c.Exchanges, contract.Exchange(strings.ToLower(strings.TrimSpace(x))))
		}
	}
	if v, ok := lookup("PERPGATE_PAPER_SEED"); ok && v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("PERPGATE_PAPER_SEED: %q is not an integer", v))
		}
		c.PaperSeed = n
	}
	c.NATSPasswords = loadNATSPasswords(lookup)
	var err error
	if c.Stream, err = connector.LoadStreamConfig(lookup); err != nil {
		errs = append(errs, err)
	}
	if c.Guards, err = connector.LoadGuardConfig(lookup); err != nil {
		errs = append(errs, err)
	}
	if c.AccountFeeds, err = connector.LoadAccountFeedConfig(lookup, contract.NewSubjects("")); err != nil {
		errs = append(errs, err)
	}
	if c.AuditRetention, err = keys.LoadAuditRetention(lookup); err != nil {
		errs = append(errs, err)
	}
	if c.NATSAuth, err = bus.LoadAuth(lookup); err != nil {
		errs = append(errs, err)
	}
	if c.Hyperliquid, err = hyperliquid.LoadConfig(lookup); err != nil {
		errs = append(errs, err)
	}
	// The edge reads its own settings; standalone has no Redis unless asked.
	if c.Edge, err = edge.LoadConfig(lookup); err != nil {
		errs = append(errs, err)
	}
	if c.Log, err = telemetry.LoadLogConfig(lookup, "text"); err != nil {
		errs = append(errs, err)
	}
	if c.Binance, err = binance.LoadConfig(lookup); err != nil {
		errs = append(errs, err)
	}
	if c.Bybit, err = bybit.LoadConfig(lookup); err != nil {
		errs = append(errs, err)
	}
	if c.OKX, err = okx.LoadConfig(lookup); err != nil {
		errs = append(errs, err)
	}
	if c.Paradex, err = paradex.LoadConfig(lookup); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Validate())
	return c, errors.Join(errs...)
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("PERPGATE_DATA_DIR must not be empty"))
	}
	if c.MasterKey != "" {
		if k, err := base64.StdEncoding.DecodeString(c.MasterKey.Reveal()); err != nil || len(k) != 32 {
			errs = append(errs, errors.New("PERPGATE_MASTER_KEY must be 32 bytes in base64 (openssl rand -base64 32)"))
		}
	}
	for _, x := range c.Exchanges {
		if !slices.Contains(BuiltIn, x) {
			errs = append(errs, fmt.Errorf("PERPGATE_EXCHANGES: %q is not an exchange perpgate serve has; use some of %v", x, BuiltIn))
		}
	}
	errs = append(errs, c.validateNATSListen())
	if c.AdminToken != "" && len(c.AdminToken) < 16 {
		errs = append(errs, errors.New("PERPGATE_ADMIN_TOKEN must be at least 16 characters"))
	}
	return errors.Join(errs...)
}

// BootstrapPath is where the first-run account, key and credential are written.
func (c Config) BootstrapPath() string { return filepath.Join(c.DataDir, "bootstrap.json") }
