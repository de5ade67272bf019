package standalone

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"
	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/ratelimit"
	"github.com/perpgate/perpgate/services/keys/admin"
	"github.com/redis/go-redis/v9"
)

// The local services the raw-pipeline and distributed modes of the bench
// run on: the standard ports, like the tests.
const (
	benchNATS     = "nats://127.0.0.1:4222"
	benchRedis    = "redis://127.0.0.1:6379/0"
	benchPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
)

// ServePipe serves the raw pipeline the gateway is compared with: an Echo
// handler that counts the request in Redis with the same Lua limiter and
// asks a trivial NATS responder for the answer, with no auth, validation
// or connector (`perpgate bench-target --mode pipe`).
func ServePipe(ctx context.Context, addr, natsURL, redisURL, prefix string) error {
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	nc, err := nats.Connect(natsURL)
	if err != nil {
		return err
	}
	defer nc.Close()
	// The reference stays the plain one-script-per-request limiter: the
	// gateway's pipelining is part of what the bench measures against it.
	return servePipeline(ctx, addr, ratelimit.NewRedis(rdb, prefix+":rl", nil), nc, nc, prefix)
}

// ServeSkeleton serves the floor of perpgate serve's own architecture: the
// pipeline of ServePipe on an embedded NATS server reached in process, with
// the in-memory limiter, and the requester and responder on connections
// of their own as the edge and connector are (`perpgate bench-target --mode
// skeleton`). What serve costs above it is auth, validation and the
// connector's work.
func ServeSkeleton(ctx context.Context, addr string) error {
	emb, err := bus.StartEmbedded(bus.EmbeddedConfig{})
	if err != nil {
		return err
	}
	defer emb.Shutdown()
	req, err := emb.Connect("skeleton-edge")
	if err != nil {
		return err
	}
	defer req.Close()
	resp, err := emb.Connect("skeleton-connector")
	if err != nil {
		return err
	}
	defer resp.Close()
	return servePipeline(ctx, addr, ratelimit.NewMemory(nil), req, resp, "benchskel")
}

// servePipeline serves /v1 as the bench's references do: bind the body,
// count it in limiter, ask a trivial responder on resp over req.
func servePipeline(ctx context.Context, addr string, limiter ratelimit.Limiter, req, resp *nats.Conn, prefix string) error {
	subject := prefix + ".bench.mark"
	answer := []byte(`{"markPrice":"60000","indexPrice":"60000"}`)
	if _, err := resp.QueueSubscribe(subject, "bench", func(m *nats.Msg) { _ = m.Respond(answer) }); err != nil {
		return err
	}
	// The subscription must reach the server before the first request.
	if err := resp.Flush(); err != nil {
		return err
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.POST("/v1", func(c echo.Context) error {
		var body map[string]any
		if err := c.Bind(&body); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(c.Request().Context(), 5*time.Second)
		defer cancel()
		if _, err := limiter.Allow(ctx, "bench-key", ratelimit.Limits{PerMinute: 1 << 30, PerDay: 1 << 30}); err != nil {
			return err
		}
		var res json.RawMessage
		if err := bus.Request(ctx, req, subject, nil, json.RawMessage(`{}`), &res); err != nil {
			return err
		}
		return c.JSONBlob(http.StatusOK, res)
	})
	e.GET("/healthz", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]any{"success": true}) })
	srv := &http.Server{Addr: addr, Handler: e, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// distDeployment is the distributed deployment under bench: edge, keys,
// paper-venue and connector-paper as processes on the local NATS, Redis
// and Postgres, in a schema, subject prefix and key prefix of their own.
type distDeployment struct {
	URL        string
	Metrics    string // connector-paper's /metrics
	Key        string
	Credential string
	stop       []func()
	dropSchema func()
}

func (d *distDeployment) Close() {
	for i := len(d.stop) - 1; i >= 0; i-- {
		d.stop[i]()
	}
	if d.dropSchema != nil {
		d.dropSchema()
	}
}

// startDist starts the deployment from the binaries next to exe (make
// build puts them in bin/). With profile set, each process writes its CPU
// profile to profile.<process name>.
func startDist(ctx context.Context, exe, dataDir, profile string) (*distDeployment, error) {
	dir := filepath.Dir(exe)
	for _, name := range []string{"edge", "keys", "paper-venue", "connector-paper"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("%s is not built next to %s (make build)", name, exe)
		}
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	prefix := "bench" + hex.EncodeToString(suffix)
	d := &distDeployment{}
	conn, err := pgx.Connect(ctx, benchPostgres)
	if err != nil {
		return nil, fmt.Errorf("postgres at %s: %w", benchPostgres, err)
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+prefix); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	d.dropSchema = func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+prefix+" CASCADE")
		conn.Close(context.WithoutCancel(ctx))
	}
	ok := false
	defer func() {
		if !ok {
			d.Close()
		}
	}()
	addrs := make([]string, 4)
	for i := range addrs {
		a, _, _, err := freeAddrs()
		if err != nil {
			return nil, err
		}
		addrs[i] = a
	}
	edgeAddr, adminAddr, venueAddr, connectorHealth := addrs[0], addrs[1], addrs[2], addrs[3]
	master := make([]byte, 32)
	_, _ = rand.Read(master)
	token := hex.EncodeToString(master[:12])
	common := []string{"PERPGATE_NATS_URL=" + benchNATS, "PERPGATE_REDIS_URL=" + benchRedis, "PERPGATE_SUBJECT_PREFIX=" + prefix,
		"PERPGATE_LOG_LEVEL=warn", "PERPGATE_HEALTH_ADDR=", "PATH=" + os.Getenv("PATH")}
	start := func(name string, env ...string) error {
		env = append(append([]string{}, common...), env...)
		if profile != "" {
			env = append(env, "PERPGATE_CPU_PROFILE="+profile+"."+name)
		}
		stop, err := startChild(ctx, filepath.Join(dir, name), env)
		if err == nil {
			d.stop = append(d.stop, stop)
		}
		return err
	}
	if err := start("keys", "PERPGATE_DATABASE_URL="+benchPostgres+"&search_path="+prefix, "PERPGATE_ADMIN_ADDR="+adminAddr,
		"PERPGATE_ADMIN_TOKEN="+token, "PERPGATE_MASTER_KEY="+base64.StdEncoding.EncodeToString(master)); err != nil {
		return nil, err
	}
	if err := start("paper-venue", "PERPGATE_PAPER_VENUE_ADDR="+venueAddr, "PERPGATE_DATA_DIR="+filepath.Join(dataDir, "venue")); err != nil {
		return nil, err
	}
	if err := start("connector-paper", "PERPGATE_PAPER_VENUE_URL=http://"+venueAddr, "PERPGATE_HEALTH_ADDR="+connectorHealth); err != nil {
		return nil, err
	}
	if err := start("edge", "PERPGATE_LISTEN_ADDR="+edgeAddr, "PERPGATE_TIER_LIMITS_BUILDER=1000000000/1000000000"); err != nil {
		return nil, err
	}
	for _, u := range []string{"http://" + edgeAddr + "/healthz", "http://" + connectorHealth + "/healthz"} {
		if err := waitReady(ctx, u); err != nil {
			return nil, err
		}
	}
	adm := admin.NewClient("http://"+adminAddr, token)
	var acct admin.AccountResponse
	deadline := time.Now().Add(30 * time.Second)
	for {
		if acct, err = adm.CreateAccount(ctx, contract.TierBuilder, "bench"); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return nil, fmt.Errorf("keys admin API: %w", err)
	}
	key, err := adm.CreateKey(ctx, acct.ID, admin.KeyRequest{Env: contract.KeyEnvTest})
	if err != nil {
		return nil, err
	}
	cred, err := adm.CreateCredential(ctx, acct.ID, admin.CredentialRequest{Exchange: contract.Paper, Env: contract.Testnet,
		Label: "bench", Secret: json.RawMessage(`{}`)})
	if err != nil {
		return nil, err
	}
	d.URL, d.Key, d.Credential = "http://"+edgeAddr+"/v1", key.Key, cred.ID
	d.Metrics = "http://" + connectorHealth + "/metrics"
	ok = true
	return d, nil
}
