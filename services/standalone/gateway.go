package standalone

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/health"
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/ratelimit"
	"github.com/perpgate/perpgate/pkg/telemetry"
	"github.com/perpgate/perpgate/services/edge"
	"github.com/perpgate/perpgate/services/keys"
	"github.com/perpgate/perpgate/services/keys/filestore"
	"github.com/perpgate/perpgate/services/keys/postgres"
	"github.com/redis/go-redis/v9"
)

// drainTimeout bounds how long each bus connection flushes at Close; the
// embedded server shuts down only after every connection has drained.
const drainTimeout = 10 * time.Second

// Gateway is every perpgate service in one process.
type Gateway struct {
	cfg Config
	log *slog.Logger
	out io.Writer

	mu       sync.Mutex
	closers  []func() error // in start order; Close runs them backwards
	embedded *bus.Embedded
	keys     *keys.Service
	edge     *edge.Server
	paper    *paper.Engine
	journal  *paper.FileJournal // the paper engine's
	boot     Bootstrap
	connect  func(name string) (*nats.Conn, error)
	metrics  *telemetry.Metrics
	policy   *health.RedisPolicy // of PERPGATE_REDIS_URL; nil without
	disk     *health.DiskSpace   // of the data dir
	store    keys.Store          // the keys service's
	records  recordLookup        // the idempotency records, when in the data dir
}

// New prepares a gateway; Start brings it up. The banner with the
// bootstrap key goes to out.
func New(cfg Config, log *slog.Logger, out io.Writer) (*Gateway, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Gateway{cfg: cfg, log: log, out: out, metrics: telemetry.NewMetrics()}, nil
}

func (g *Gateway) onClose(f func() error) {
	g.mu.Lock()
	g.closers = append(g.closers, f)
	g.mu.Unlock()
}

// Start brings every service up in dependency order: bus, keys, paper
// venue and connector, edge; then bootstraps an empty store. On failure
// whatever started is stopped again.
func (g *Gateway) Start(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			err = errors.Join(err, g.Close())
		}
	}()
	// Ports first: a busy one must not leave a fresh data dir bootstrapped.
	if err := checkPorts(g.cfg); err != nil {
		return err
	}
	if err := os.MkdirAll(g.cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	watch, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	g.onClose(func() error { stopWatch(); return nil })
	g.disk = health.WatchDisk(watch, g.cfg.DataDir, g.log)
	secrets, err := loadSecrets(g.cfg)
	if err != nil {
		return err
	}
	connect, err := g.startBus()
	if err != nil {
		return err
	}
	if g.embedded != nil {
		g.embedded.KeepJetStream(watch, filepath.Join(g.cfg.DataDir, "nats"), g.disk.Err, g.log)
	}
	g.connect = connect
	if err := g.startKeys(ctx, connect, secrets); err != nil {
		return err
	}
	rdb, err := g.redis(watch)
	if err != nil {
		return err
	}
	if err := g.startConnectors(connect, rdb); err != nil {
		return err
	}
	// Bootstrap before the edge listens: once /healthz answers, the key
	// and credential exist and bootstrap.json is written.
	boot, created, err := g.bootstrap(ctx, secrets.adminToken)
	if err != nil {
		return err
	}
	g.boot = boot
	if g.records != nil {
		go g.settleLater(watch, g.store, g.records)
	}
	if err := g.startEdge(connect, rdb); err != nil {
		return err
	}
	printBanner(g.out, boot, created, g.URL(), g.AdminURL(), g.cfg.BootstrapPath())
	return nil
}

// checkPorts fails when an address serve will listen on is taken, naming
// the setting that moves it. The services listen later, so a port taken in
// between still fails there, with the same advice.
func checkPorts(cfg Config) error {
	for _, a := range []struct{ name, addr string }{
		{"PERPGATE_LISTEN_ADDR", cfg.Edge.ListenAddr}, {"PERPGATE_ADMIN_ADDR", cfg.AdminAddr}, {"PERPGATE_NATS_LISTEN", cfg.NATSListen},
	} {
		if a.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", a.addr)
		if err != nil {
			return fmt.Errorf("%s %s: %w; stop what uses it (another perpgate serve?) or set %s to another address", a.name, a.addr, err, a.name)
		}
		ln.Close()
	}
	return nil
}

// startBus connects to the external NATS or starts the embedded one, and
// returns a function giving each service its own connection.
func (g *Gateway) startBus() (func(name string) (*nats.Conn, error), error) {
	if g.cfg.NATSURL != "" {
		return func(name string) (*nats.Conn, error) {
			nc, err := bus.Connect(g.cfg.NATSURL, name, g.cfg.NATSAuth, g.log)
			if err == nil {
				g.onClose(func() error { return bus.Drain(nc, drainTimeout) })
			}
			return nc, err
		}, nil
	}
	// JetStream carries the audit trail; its files live in the data dir.
	cfg := bus.EmbeddedConfig{Listen: g.cfg.NATSListen, StoreDir: filepath.Join(g.cfg.DataDir, "nats")}
	if cfg.Listen != "" {
		var err error
		if cfg.Logins, err = natsLogins(g.cfg); err != nil {
			return nil, err
		}
	}
	emb, err := bus.StartEmbedded(cfg)
	if err != nil {
		return nil, err
	}
	g.embedded = emb
	g.onClose(func() error { emb.Shutdown(); return nil })
	if url := emb.ClientURL(); url != "" {
		g.log.Info("embedded nats listening", "url", url, "users", filepath.Join(g.cfg.DataDir, natsUsersFile))
	}
	return func(name string) (*nats.Conn, error) {
		nc, err := emb.ConnectAs(name, loginAs(cfg.Logins, name), g.log.With("nats_user", name))
		if err == nil {
			g.onClose(func() error { return bus.Drain(nc, drainTimeout) })
		}
		return nc, err
	}, nil
}

// loginAs is how the in-process service name logs in: as its own user when
// the server has users (a name that is none connects without one and is
// refused).
func loginAs(logins []bus.Login, name string) bus.Auth {
	for _, l := range logins {
		if l.User.Name == name {
			return l.User.Auth(l.Password)
		}
	}
	return bus.Auth{}
}

func (g *Gateway) startKeys(ctx context.Context, connect func(string) (*nats.Conn, error), s secrets) error {
	var store keys.Store
	var err error
	if g.cfg.DatabaseURL != "" {
		store, err = postgres.Open(ctx, g.cfg.DatabaseURL)
	} else {
		store, err = filestore.Open(g.cfg.DataDir)
	}
	if err != nil {
		return fmt.Errorf("open key store: %w", err)
	}
	g.onClose(store.Close)
	g.store = store
	nc, err := connect("keys")
	if err != nil {
		return err
	}
	cfg := keys.DefaultConfig()
	cfg.DataDir, cfg.AdminAddr, cfg.SubjectPrefix = g.cfg.DataDir, g.cfg.AdminAddr, g.cfg.Edge.SubjectPrefix
	cfg.AdminToken, cfg.MasterKey = s.adminToken, s.masterKey
	cfg.JetStreamReplicas = g.cfg.Edge.JetStreamReplicas
	cfg.AuditRetention = g.cfg.AuditRetention
	svc, err := keys.New(cfg, nc, store, g.log.With("service", "keys"), nil)
	if err != nil {
		return err
	}
	if err := svc.Start(ctx); err != nil {
		return err
	}
	g.keys = svc
	g.onClose(svc.Close)
	return nil
}

// redis connects to PERPGATE_REDIS_URL, when set, and watches its
// eviction policy until ctx ends.
func (g *Gateway) redis(ctx context.Context) (*redis.Client, error) {
	if g.cfg.RedisURL == "" {
		return nil, nil
	}
	opts, err := redis.ParseURL(g.cfg.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("PERPGATE_REDIS_URL: %w", err)
	}
	rdb := redis.NewClient(ratelimit.FailFast(opts)) // the limiter's store: an outage is a quick 503
	g.onClose(rdb.Close)
	g.policy = health.WatchRedisPolicy(ctx, rdb, g.log)
	return rdb, nil
}

// startConnectors runs one connector runtime per exchange adapter (see
// connectors.go), all sharing one idempotency store.
func (g *Gateway) startConnectors(connect func(string) (*nats.Conn, error), rdb *redis.Client) error {
	var idem connector.IdempotencyStore
	var file *connector.FileIdempotency
	if rdb != nil {
		idem = connector.GuardIdempotency(connector.NewRedisIdempotency(rdb, g.cfg.Edge.SubjectPrefix+":idem:"), g.policy.Err)
	} else {
		// Kept in the data dir, so a restart keeps the 24 h promise.
		var err error
		if file, err = connector.NewFileIdempotency(filepath.Join(g.cfg.DataDir, "idempotency.log"), nil); err != nil {
			return err
		}
		g.onClose(file.Close)
		idem, g.records = file, file
	}
	ledger, err := g.ledger(rdb)
	if err != nil {
		return err
	}
	adapters, err := g.adapters(rdb)
	if err != nil {
		return err
	}
	if file != nil {
		// A paper placement's claim and result are durable in the paper
		// journal (the adapter carries claims), not waited for in the
		// idempotency log: what a crash took from the log comes back from
		// the journal's records since its snapshot, and a snapshot, which
		// drops the records before it, first makes the log durable.
		if _, err := file.Recover(g.paper.Notes()); err != nil {
			return err
		}
		g.journal.BeforeCompact(file.SyncAll)
	}
	for _, a := range adapters {
		if !g.cfg.serves(a.Exchange()) {
			continue
		}
		nc, err := connect(bus.ConnectorUser(a.Exchange()))
		if err != nil {
			return err
		}
		var protections connector.ProtectionStore // in memory without Redis
		if rdb != nil {
			protections = connector.NewRedisProtections(rdb, g.cfg.Edge.SubjectPrefix+":protect:"+string(a.Exchange())+":")
		}
		attached, err := g.attachStore(rdb, a.Exchange())
		if err != nil {
			return err
		}
		feeds := g.cfg.AccountFeeds
		feeds.Events = g.cfg.Edge.Events() // the stream the edge reads, in the embedded server's data dir
		rt := connector.New(connector.Config{Subjects: contract.NewSubjects(g.cfg.Edge.SubjectPrefix), Metrics: g.metrics,
			Protections: protections, Ledger: ledger, Attached: attached, ProtectionCheck: g.cfg.ProtectionCheck,
			Stream: g.cfg.Stream, Guards: &g.cfg.Guards, AccountFeeds: feeds}, a, nc, idem,
			g.log.With("service", "connector"))
		if err := rt.Start(); err != nil {
			return err
		}
		g.onClose(rt.Stop)
	}
	return g.startPaperEvents(connect)
}

// attachStore keeps one exchange's entries placed with takeProfit/stopLoss
// until their pair is placed: in Redis, else in the data dir, so a restart
// finishes what the last run began.
func (g *Gateway) attachStore(rdb *redis.Client, x contract.Exchange) (connector.AttachStore, error) {
	if rdb != nil {
		return connector.NewRedisAttachments(rdb, g.cfg.Edge.SubjectPrefix+":attach:"+string(x)+":"), nil
	}
	return connector.NewFileAttachments(filepath.Join(g.cfg.DataDir, "attached-"+string(x)+".json"))
}

// ledger is the daily-notional ledger every exchange's runtime shares, so
// maxDailyNotional counts a key's orders on all venues together.
func (g *Gateway) ledger(rdb *redis.Client) (connector.NotionalLedger, error) {
	if rdb != nil {
		return connector.NewRedisLedger(rdb, g.cfg.Edge.SubjectPrefix+":notional:"), nil
	}
	file, err := connector.NewFileLedger(filepath.Join(g.cfg.DataDir, "notional.log"), nil)
	if err != nil {
		return nil, err
	}
	g.onClose(file.Close)
	return file, nil
}

func (g *Gateway) startEdge(connect func(string) (*nats.Conn, error), rdb *redis.Client) error {
	nc, err := connect("edge")
	if err != nil {
		return err
	}
	deps := edge.Deps{NATS: nc, Limiter: ratelimit.NewMemory(nil), Logger: g.log.With("service", "edge"), Metrics: g.metrics,
		Checks: map[string]health.Check{"disk": g.disk.Check}, StoreGuard: g.disk.Err}
	if rdb != nil {
		deps.Limiter = ratelimit.NewPipelined(ratelimit.NewRedis(rdb, g.cfg.Edge.SubjectPrefix+":rl", nil))
		deps.Checks["redis"] = g.policy.Check
		deps.StoreGuard = func() error { return errors.Join(g.disk.Err(), g.policy.Err()) }
	}
	if fs, ok := g.store.(*filestore.Store); ok {
		// One process owns the data directory: the edge writes audit
		// entries where the keys service reads them, not through the stream.
		deps.AuditSink = fs.AppendAudit
	}
	srv, err := edge.New(g.cfg.Edge, deps)
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	g.edge = srv
	g.onClose(srv.Close)
	return nil
}

// Run starts the gateway and serves until ctx ends.
func (g *Gateway) Run(ctx context.Context) error {
	if err := g.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	g.log.Info("shutting down")
	return g.Close()
}

// Close stops everything in reverse start order: the edge first (in-flight
// requests finish), the bus last. It is idempotent.
func (g *Gateway) Close() error {
	g.mu.Lock()
	closers := g.closers
	g.closers = nil
	g.mu.Unlock()
	var errs []error
	for i := len(closers) - 1; i >= 0; i-- {
		if err := closers[i](); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// URL is the base URL of the public API.
func (g *Gateway) URL() string {
	if g.edge == nil || g.edge.Addr() == nil {
		return ""
	}
	return "http://" + reachable(g.edge.Addr())
}

// reachable turns a wildcard listen address into one a client can dial.
func reachable(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		return net.JoinHostPort("localhost", strconv.Itoa(tcp.Port))
	}
	return a.String()
}

// AdminURL is the base URL of the admin API.
func (g *Gateway) AdminURL() string {
	if g.keys == nil || g.keys.AdminAddr() == "" {
		return ""
	}
	return "http://" + g.keys.AdminAddr()
}

// Bootstrap returns the first-run account, key and credential.
func (g *Gateway) Bootstrap() Bootstrap { return g.boot }

// Keys exposes the keys service (tests revoke keys and add credentials).
func (g *Gateway) Keys() *keys.Service { return g.keys }

// PaperEngine exposes the paper venue's engine, so tests can move prices.
func (g *Gateway) PaperEngine() *paper.Engine { return g.paper }

// Connect opens another connection to the gateway's bus (for tests and
// embedding); the gateway closes it on Close. With PERPGATE_NATS_LISTEN
// the embedded server takes the services' users only, so name must be one.
func (g *Gateway) Connect(name string) (*nats.Conn, error) { return g.connect(name) }
