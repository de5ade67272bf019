package deploy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/events"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys/admin"
	"github.com/redis/go-redis/v9"
)

// TestNATSPermissions runs deploy/nats.conf, as it is, on a real
// nats-server, with keys, edge, paper-venue and connector-paper as
// processes each logged in as its own user (PERPGATE_NATS_USER and
// PERPGATE_NATS_PASSWORD, replies under its own inbox prefix). It shows
// that the normal path works under those permissions (an operation edge →
// connector → keys, and a revocation event keys → edge), that a
// connector's user gets its own exchange's credential secrets from the
// keys service but cannot ask for another exchange's, that the edge's user
// cannot ask for any secret, and that no user can subscribe to another
// service's inbox, where the secrets travel.
func TestNATSPermissions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts nats-server and four service processes; skipped with -short")
	}
	passwords, serverEnv := natsPasswords(t)
	natsURL, serverLog := testenv.NATSServer(t, "nats.conf", serverEnv)
	rdb := testenv.Redis(t)
	bins := testenv.Build(t, "./services/keys/cmd/keys", "./services/edge/cmd/edge",
		"./services/connectors/paper/cmd/paper-venue", "./services/connectors/paper/cmd/connector-paper")

	env := func(user string, more map[string]string) map[string]string {
		m := map[string]string{
			"PERPGATE_NATS_URL":    natsURL,
			"PERPGATE_LOG_FORMAT":  "json",
			"PERPGATE_HEALTH_ADDR": "127.0.0.1:0",
		}
		if user != "" {
			m["PERPGATE_NATS_USER"], m["PERPGATE_NATS_PASSWORD"] = user, passwords[user]
		}
		for k, v := range more {
			m[k] = v
		}
		return m
	}
	adminToken := randomHex(t, 24)
	masterKey := make([]byte, 32)
	_, _ = rand.Read(masterKey)
	keysProc := testenv.Start(t, "keys", filepath.Join(bins, "keys"), env("keys", map[string]string{
		"PERPGATE_DATA_DIR":    t.TempDir(),
		"PERPGATE_ADMIN_ADDR":  "127.0.0.1:0",
		"PERPGATE_ADMIN_TOKEN": adminToken,
		"PERPGATE_MASTER_KEY":  base64.StdEncoding.EncodeToString(masterKey),
	}))
	venueProc := testenv.Start(t, "paper-venue", filepath.Join(bins, "paper-venue"), env("paper-venue", map[string]string{
		"PERPGATE_PAPER_VENUE_ADDR": "127.0.0.1:0",
	}))
	edgeProc := testenv.Start(t, "edge", filepath.Join(bins, "edge"), env("edge", map[string]string{
		"PERPGATE_LISTEN_ADDR": "127.0.0.1:0",
		"PERPGATE_REDIS_URL":   redisURL(rdb.Options()),
	}))
	connProc := testenv.Start(t, "connector-paper", filepath.Join(bins, "connector-paper"), env("connector-paper", map[string]string{
		"PERPGATE_PAPER_VENUE_URL": "http://" + venueProc.Field(t, "paper venue started", "addr"),
	}))
	procs := []*testenv.Process{keysProc, venueProc, edgeProc, connProc}

	ctx := context.Background()
	adm := admin.NewClient("http://"+keysProc.Field(t, "keys service started", "admin_addr"), adminToken)
	var acct admin.AccountResponse
	testenv.Poll(t, "admin API answers", 10*time.Second, func() (err error) {
		acct, err = adm.CreateAccount(ctx, contract.TierBuilder, "nats-permissions")
		return err
	})
	// Made-up secrets: the hyperliquid key only has to be a valid
	// secp256k1 scalar.
	secrets := map[contract.Exchange]string{
		contract.Paper:       `{"startingBalance":"5000"}`,
		contract.Binance:     `{"apiKey":"test-api-key-` + randomHex(t, 4) + `","apiSecret":"test-api-secret"}`,
		contract.Hyperliquid: `{"accountAddress":"0x` + strings.Repeat("ab", 20) + `","agentPrivateKey":"0x` + strings.Repeat("01", 32) + `"}`,
	}
	creds := map[contract.Exchange]string{}
	for x, secret := range secrets {
		cred, err := adm.CreateCredential(ctx, acct.ID, admin.CredentialRequest{
			Exchange: x, Env: contract.Testnet, Label: "nats-permissions", Secret: json.RawMessage(secret)})
		if err != nil {
			t.Fatalf("create %s credential: %v", x, err)
		}
		creds[x] = cred.ID
	}
	key, err := adm.CreateKey(ctx, acct.ID, admin.KeyRequest{Env: contract.KeyEnvTest})
	if err != nil {
		t.Fatalf("create key: %v", err)
	}
	t.Cleanup(func() { deleteKeys(t, rdb, "perpgate:rl:{"+key.ID+"}*") })
	edgeURL := "http://" + edgeProc.Field(t, "edge listening", "addr")
	getMark := func() (int, string) {
		body := `{"operation":"getMarkPrice","market":"BTC","credentialId":"` + creds[contract.Paper] + `"}`
		req, _ := http.NewRequest(http.MethodPost, edgeURL+"/v1", strings.NewReader(body))
		req.Header.Set("X-API-Key", key.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}

	t.Run("edge to connector to keys", func(t *testing.T) {
		testenv.Poll(t, "getMarkPrice through edge, connector-paper and keys", 15*time.Second, func() error {
			if status, body := getMark(); status != http.StatusOK {
				return fmt.Errorf("%d %s", status, body)
			}
			return nil
		})
	})

	t.Run("a trading call is audited and usage counted", func(t *testing.T) {
		body := `{"operation":"placeLimitOrder","market":"BTC","side":"BUY","size":"0.01","price":"1000","credentialId":"` + creds[contract.Paper] + `"}`
		req, _ := http.NewRequest(http.MethodPost, edgeURL+"/v1", strings.NewReader(body))
		req.Header.Set("X-API-Key", key.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("placeLimitOrder: %d", resp.StatusCode)
		}
		testenv.Poll(t, "the order in the audit trail", 10*time.Second, func() error {
			page, err := adm.Audit(ctx, acct.ID, nil)
			if err != nil {
				return err
			}
			for _, e := range page.Entries {
				if e.Operation == contract.OpPlaceLimitOrder && e.Code == "OK" && len(e.OrderIDs) == 1 {
					return nil
				}
			}
			return fmt.Errorf("audit entries %+v", page.Entries)
		})
		testenv.Poll(t, "usage counted", 10*time.Second, func() error {
			u, err := adm.KeyUsage(ctx, key.ID, 1)
			if err != nil {
				return err
			}
			if c := u.Days[0].ByOperation[contract.OpPlaceLimitOrder]; c.OK != 1 {
				return fmt.Errorf("usage %+v", u.Days)
			}
			return nil
		})
	})

	t.Run("account events reach the edge's stream", func(t *testing.T) {
		checkAccountEvents(t, edgeURL, key.Key, creds[contract.Paper])
	})

	// The test's connections live as long as the whole test.
	top := t
	clients := map[string]*client{}
	as := func(t *testing.T, user string) *client {
		t.Helper()
		if c, ok := clients[user]; ok {
			return c
		}
		c := connectAs(top, natsURL, user, passwords[user])
		clients[user] = c
		return c
	}

	// What an event cursor asks when its consumer has gone quiet.
	t.Run("the edge reads a credential's newest event", func(t *testing.T) {
		r, err := events.NewReader(as(t, "edge").nc, events.Config{Subjects: contract.NewSubjects(""), Replicas: 1})
		if err != nil {
			t.Fatal(err)
		}
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		ev, err := r.Last(lctx, contract.Paper, creds[contract.Paper], contract.EventOrder)
		if err != nil || ev == nil {
			t.Fatalf("newest order event of the paper credential: %v, %v", ev, err)
		}
	})

	t.Run("a connector gets its own exchange's secrets", func(t *testing.T) {
		for _, x := range []contract.Exchange{contract.Binance, contract.Hyperliquid, contract.Paper} {
			t.Run(string(x), func(t *testing.T) {
				got := as(t, "connector-"+string(x)).secret(t, x, creds[x], 5*time.Second)
				if got.err != nil {
					t.Fatalf("request %s: %v", contract.NewSubjects("").Secret(x), got.err)
				}
				var want, have map[string]any
				_ = json.Unmarshal([]byte(secrets[x]), &want)
				if err := got.resp.Secret.Decode(&have); err != nil || fmt.Sprint(have) != fmt.Sprint(want) {
					t.Errorf("secret of the %s credential: got %v (%v), want the one stored", x, have, err)
				}
			})
		}
	})

	// The edge listens on the inboxes it must not read before secrets
	// travel, to show they are not delivered there.
	type snoop struct {
		user, subject string
		sub           *nats.Subscription
	}
	var snoops []*snoop
	t.Run("no user subscribes to what is not its own", func(t *testing.T) {
		tests := []struct{ name, user, subject string }{
			{"edge: a connector's inbox", "edge", "_INBOX_connector-binance.>"},
			{"edge: the default inbox", "edge", "_INBOX.>"},
			{"edge: everything", "edge", ">"},
			{"edge: secret requests", "edge", "perpgate.keys.secret.>"},
			{"edge: connector operations", "edge", "perpgate.exchange.binance.>"},
			{"connector-binance: another connector's inbox", "connector-binance", "_INBOX_connector-hyperliquid.>"},
			{"connector-binance: another exchange's operations", "connector-binance", "perpgate.exchange.hyperliquid.>"},
			{"connector-binance: secret requests", "connector-binance", "perpgate.keys.secret.>"},
			{"connector-binance: the edge's inbox", "connector-binance", "_INBOX_edge.>"},
			{"keys: a connector's inbox", "keys", "_INBOX_connector-paper.>"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c := as(t, tt.user)
				sub, err := c.nc.SubscribeSync(tt.subject)
				if err != nil {
					t.Fatal(err)
				}
				snoops = append(snoops, &snoop{user: tt.user, subject: tt.subject, sub: sub})
				c.violation(t, "Subscription", tt.subject)
			})
		}
	})

	t.Run("no user requests a secret that is not its exchange's", func(t *testing.T) {
		type denied struct{ user, exchange string }
		tests := []denied{
			{"connector-binance", "hyperliquid"},
			{"connector-binance", "paper"},
			{"connector-hyperliquid", "binance"},
			{"connector-paper", "binance"},
			{"keys", "binance"},
		}
		for _, x := range contract.Exchanges {
			tests = append(tests, denied{"edge", string(x)})
		}
		for _, tt := range tests {
			as(t, tt.user)
		}
		for _, tt := range tests {
			t.Run(tt.user+" asks for "+tt.exchange, func(t *testing.T) {
				t.Parallel()
				x := contract.Exchange(tt.exchange)
				id := creds[x]
				if id == "" {
					id = "6f1c0a52-7d4e-4c1b-9a4e-2b7f1f7f0a11" // bybit, okx, paradex: none stored
				}
				c := clients[tt.user]
				got := c.secret(t, x, id, 300*time.Millisecond)
				if got.err == nil {
					t.Fatalf("%s got the %s secret: %v", tt.user, x, got.resp.Credential)
				}
				if !bus.IsTimeout(got.err) {
					t.Errorf("want the request dropped by the server (a timeout), got %v", got.err)
				}
				c.violation(t, "Publish", contract.NewSubjects("").Secret(x))
			})
		}
	})

	t.Run("no secret reaches another user's subscription", func(t *testing.T) {
		for _, x := range []contract.Exchange{contract.Binance, contract.Hyperliquid, contract.Paper} {
			if got := as(t, "connector-"+string(x)).secret(t, x, creds[x], 5*time.Second); got.err != nil {
				t.Fatalf("connector-%s: %v", x, got.err)
			}
		}
		for _, c := range clients {
			if err := c.nc.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range snoops {
			if n, _, _ := s.sub.Pending(); n != 0 {
				msg, _ := s.sub.NextMsg(0)
				t.Errorf("%s subscribed to %s received %d messages, first on %s", s.user, s.subject, n, msg.Subject)
			}
		}
	})

	t.Run("no user publishes outside its subjects", func(t *testing.T) {
		tests := []struct{ name, user, subject string }{
			{"edge forges a change event", "edge", "perpgate.events.keys"},
			{"edge calls micro discovery", "edge", "$SRV.PING"},
			{"connector-binance calls another exchange", "connector-binance", "perpgate.exchange.hyperliquid.market.getMarkPrice"},
			{"connector-binance looks up an API key", "connector-binance", "perpgate.keys.apikey"},
			{"connector-binance forges a change event", "connector-binance", "perpgate.events.keys"},
			{"keys publishes market data", "keys", "perpgate.stream.paper.testnet.m.BTC-USD-PERP"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c := as(t, tt.user)
				if err := c.nc.Publish(tt.subject, []byte(`{}`)); err != nil {
					t.Fatal(err)
				}
				c.violation(t, "Publish", tt.subject)
			})
		}
	})

	t.Run("keys reaches a connector (the kill switch)", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req := contract.ConnectorRequest{RequestID: "kill-switch", Operation: contract.OpGetMarkPrice, AccountID: acct.ID,
			Credential: contract.CredentialInfo{ID: creds[contract.Paper], AccountID: acct.ID, Exchange: contract.Paper,
				Environment: contract.Testnet}, Params: json.RawMessage(`{"market":"BTC"}`)}
		var resp json.RawMessage
		err := bus.RequestConnector(ctx, as(t, "keys").nc, contract.NewSubjects("").Operation(contract.Paper,
			mustOp(t, contract.OpGetMarkPrice)), req, &resp)
		if err != nil {
			t.Fatalf("keys → connector-paper getMarkPrice: %v", err)
		}
	})

	t.Run("a user logs in with its own password only", func(t *testing.T) {
		log := slog.New(slog.NewTextHandler(&testenv.Output{}, nil))
		for name, auth := range map[string]bus.Auth{
			"anonymous":              {},
			"edge with keys' secret": {User: "edge", Password: bus.Password(passwords["keys"])},
		} {
			if nc, err := bus.Connect(natsURL, "test", auth, log); err == nil {
				nc.Close()
				t.Errorf("%s: connected", name)
			} else if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
				t.Errorf("%s: want an authorization error, got %v", name, err)
			}
		}
	})

	t.Run("a revocation reaches the edge", func(t *testing.T) {
		if _, err := adm.RevokeKey(ctx, key.ID); err != nil {
			t.Fatal(err)
		}
		testenv.Poll(t, "a revoked key is refused", 2*time.Second, func() error {
			if status, body := getMark(); status != http.StatusUnauthorized {
				return fmt.Errorf("%d %s", status, body)
			}
			return nil
		})
	})

	// A permission the services need but lack shows only as a log line.
	for _, p := range procs {
		for _, rec := range p.Records() {
			if rec["msg"] == "nats error" {
				t.Errorf("%s: %v", p.Name, rec)
			}
		}
	}
	if t.Failed() {
		t.Logf("nats-server log:\n%s", serverLog)
	}
}

// natsPasswords makes up a password for every user of nats.conf and
// returns them by user, and the server's environment that carries them.
// It fails t unless each user's variable is NATS_<USER>_PASSWORD, the
// convention docker-compose.yml and k8s/ follow.
func natsPasswords(t *testing.T) (map[string]string, map[string]string) {
	t.Helper()
	conf, err := os.ReadFile("nats.conf")
	if err != nil {
		t.Fatal(err)
	}
	users := regexp.MustCompile(`(?m)^\s*user:\s*([\w-]+)\s*\n\s*password:\s*\$(\w+)`).FindAllStringSubmatch(string(conf), -1)
	if len(users) == 0 {
		t.Fatal("nats.conf: no user with a $PASSWORD variable")
	}
	byUser, env := map[string]string{}, map[string]string{}
	for _, u := range users {
		if want := passwordVar(u[1]); u[2] != want {
			t.Errorf("nats.conf: user %s reads $%s; want $%s", u[1], u[2], want)
		}
		// nats.conf reads a value that starts with a digit as a number.
		byUser[u[1]] = "p" + randomHex(t, 16)
		env[u[2]] = byUser[u[1]]
	}
	return byUser, env
}

// passwordVar is the environment variable holding user's NATS password.
func passwordVar(user string) string { return bus.ServiceUser{Name: user}.PasswordVar() }

// client is the test's own connection as one nats.conf user, made the way
// the services make theirs (bus.LoadAuth, bus.Connect).
type client struct {
	user string
	nc   *nats.Conn
	log  *testenv.Output
}

func connectAs(t *testing.T, natsURL, user, password string) *client {
	t.Helper()
	env := map[string]string{"PERPGATE_NATS_USER": user, "PERPGATE_NATS_PASSWORD": password}
	auth, err := bus.LoadAuth(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	c := &client{user: user, log: &testenv.Output{}}
	c.nc, err = bus.Connect(natsURL, "test "+user, auth, slog.New(slog.NewJSONHandler(c.log, nil)))
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(c.nc.Close)
	return c
}

type secretReply struct {
	resp contract.SecretResponse
	err  error
}

// secret asks the keys service for credential id's secret on exchange x's
// subject.
func (c *client) secret(t *testing.T, x contract.Exchange, id string, timeout time.Duration) secretReply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var r secretReply
	r.err = bus.Request(ctx, c.nc, contract.NewSubjects("").Secret(x), nil, contract.SecretRequest{CredentialID: id}, &r.resp)
	return r
}

// violation waits for the server's permissions error about kind
// ("Publish" or "Subscription") on subject, as bus.Connect logs it.
func (c *client) violation(t *testing.T, kind, subject string) {
	t.Helper()
	want := fmt.Sprintf(`Permissions Violation for %s to "%s"`, kind, subject)
	testenv.Poll(t, c.user+": "+want, 5*time.Second, func() error {
		for _, line := range strings.Split(c.log.String(), "\n") {
			var rec struct{ Msg, Err string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "nats error" && strings.Contains(rec.Err, want) {
				return nil
			}
		}
		return fmt.Errorf("not in the client's log:\n%s", c.log)
	})
}

func mustOp(t *testing.T, name string) *contract.Operation {
	t.Helper()
	op, ok := contract.Lookup(name)
	if !ok {
		t.Fatalf("no operation %s", name)
	}
	return op
}

// redisURL gives the test Redis to the edge as PERPGATE_REDIS_URL.
func redisURL(o *redis.Options) string {
	u := url.URL{Scheme: "redis", Host: o.Addr, Path: "/" + strconv.Itoa(o.DB)}
	if o.Password != "" {
		u.User = url.UserPassword(o.Username, o.Password)
	}
	return u.String()
}

// deleteKeys removes the Redis keys matching pattern.
func deleteKeys(t *testing.T, rdb *redis.Client, pattern string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var keys []string
	iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	err := iter.Err()
	if err == nil && len(keys) > 0 {
		err = rdb.Del(ctx, keys...).Err()
	}
	if err != nil {
		t.Errorf("delete redis keys %s: %v", pattern, err)
	}
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
