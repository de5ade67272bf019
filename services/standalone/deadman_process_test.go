package standalone

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/perpgate/perpgate/services/keys/admin"
)

// TestDeadManSwitchOutlivesReplica runs the emulated dead man's switch as
// deployed (keys, edge, paper venue and connector-paper as processes, the
// machine's NATS with JetStream): a switch armed through one connector
// replica fires after that replica is killed, served by the replica that
// replaced it; renewing before the deadline keeps the orders, and 0 turns
// the switch off.
func TestDeadManSwitchOutlivesReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four binaries and runs them as processes; skipped with -short")
	}
	natsURL := testenv.NATSURL(t)
	rdb, prefix := testenv.RedisPrefix(t)
	_, dsn := testenv.Postgres(t)
	t.Cleanup(func() { deleteBucket(t, natsURL, contract.NewSubjects(prefix).DeadManSwitches()) })
	bins := testenv.Build(t, "./services/keys/cmd/keys", "./services/edge/cmd/edge",
		"./services/connectors/paper/cmd/paper-venue", "./services/connectors/paper/cmd/connector-paper")
	c := newCluster(t, bins, map[string]string{
		"PERPGATE_NATS_URL": natsURL, "PERPGATE_SUBJECT_PREFIX": prefix,
		"PERPGATE_LOG_FORMAT": "json", "PERPGATE_HEALTH_ADDR": "127.0.0.1:0",
	})
	adminToken := randomHex(t, 24)
	keysProc := c.start("keys", "keys", map[string]string{
		"PERPGATE_DATABASE_URL": dsn, "PERPGATE_DATA_DIR": t.TempDir(), "PERPGATE_ADMIN_ADDR": "127.0.0.1:0",
		"PERPGATE_ADMIN_TOKEN": adminToken, "PERPGATE_MASTER_KEY": randomKey(t),
	})
	venueProc := c.start("paper-venue", "paper-venue", map[string]string{"PERPGATE_PAPER_VENUE_ADDR": "127.0.0.1:0", "PERPGATE_PAPER_SEED": "7"})
	redisURL := redisURLOf(rdb.Options().Addr, rdb.Options().DB, rdb.Options().Username, rdb.Options().Password)
	edgeProc := c.start("edge", "edge", map[string]string{"PERPGATE_LISTEN_ADDR": "127.0.0.1:0", "PERPGATE_REDIS_URL": redisURL,
		"PERPGATE_REQUEST_TIMEOUT": "5s", "PERPGATE_TIER_LIMITS_BUILDER": "10000/100000"})
	connectorEnv := map[string]string{
		"PERPGATE_REDIS_URL":       redisURL,
		"PERPGATE_PAPER_VENUE_URL": "http://" + c.addr(t, venueProc, "paper venue started", "addr"),
	}
	armer := c.start("connector-paper-a", "connector-paper", connectorEnv)

	ctx := context.Background()
	adm := admin.NewClient("http://"+c.addr(t, keysProc, "keys service started", "admin_addr"), adminToken)
	var acct admin.AccountResponse
	c.poll(t, "admin API answers", 10*time.Second, func() error {
		var err error
		acct, err = adm.CreateAccount(ctx, contract.TierBuilder, "deadman-test")
		return err
	})
	cred, err := adm.CreateCredential(ctx, acct.ID, admin.CredentialRequest{Exchange: contract.Paper, Env: contract.Testnet,
		Label: "deadman-test", Secret: json.RawMessage(`{"startingBalance":"5000"}`)})
	if err != nil {
		t.Fatal(err)
	}
	key, err := adm.CreateKey(ctx, acct.ID, admin.KeyRequest{Env: contract.KeyEnvTest})
	if err != nil {
		t.Fatal(err)
	}
	c.apiKey, c.credentialID = key.Key, cred.ID
	c.edgeURL = "http://" + c.addr(t, edgeProc, "edge listening", "addr")
	c.waitServing(t)
	mark := dec(t, c.ok(t, map[string]any{"operation": "getMarkPrice", "market": "BTC"})["markPrice"])
	open := func(id any) bool {
		for _, o := range objects(t, c.ok(t, map[string]any{"operation": "getOrders", "market": "BTC"})["orders"]) {
			if o["id"] == id {
				return true
			}
		}
		return false
	}

	t.Run("fires after the replica that armed it is killed", func(t *testing.T) {
		placed := c.ok(t, c.farLimitOrder(mark))
		sw := c.ok(t, map[string]any{"operation": "setDeadManSwitch", "market": "BTC", "timeoutSeconds": 5})
		if sw["mode"] != contract.DeadManEmulated {
			t.Fatalf("setDeadManSwitch on paper: %v, want mode emulated", sw)
		}
		deadline := time.Unix(int64(sw["deadline"].(float64)), 0)
		armer.Kill()
		c.start("connector-paper-b", "connector-paper", connectorEnv)
		c.waitServing(t)
		if time.Now().Before(deadline.Add(-time.Second)) && !open(placed["orderId"]) {
			t.Fatalf("order %v was cancelled before the deadline %s", placed["orderId"], deadline)
		}
		c.poll(t, "the switch cancels the order", time.Until(deadline)+15*time.Second, func() error {
			if open(placed["orderId"]) {
				return fmt.Errorf("order %v still open at %s (deadline %s)", placed["orderId"], time.Now().Format(time.TimeOnly), deadline.Format(time.TimeOnly))
			}
			return nil
		})
	})

	t.Run("renewing keeps the orders and 0 turns it off", func(t *testing.T) {
		placed := c.ok(t, c.farLimitOrder(mark))
		first := c.ok(t, map[string]any{"operation": "setDeadManSwitch", "market": "BTC", "timeoutSeconds": 5})
		end := time.Unix(int64(first["deadline"].(float64)), 0).Add(4 * time.Second)
		for time.Now().Before(end) {
			time.Sleep(2 * time.Second)
			c.ok(t, map[string]any{"operation": "setDeadManSwitch", "market": "BTC", "timeoutSeconds": 5})
		}
		if !open(placed["orderId"]) {
			t.Fatalf("order %v was cancelled although the switch was renewed every 2 s", placed["orderId"])
		}
		off := c.ok(t, map[string]any{"operation": "setDeadManSwitch", "market": "BTC", "timeoutSeconds": 0})
		if off["deadline"] != float64(0) {
			t.Fatalf("setDeadManSwitch 0 answered %v", off)
		}
		time.Sleep(7 * time.Second)
		if !open(placed["orderId"]) {
			t.Fatalf("order %v was cancelled after the switch was turned off", placed["orderId"])
		}
		c.ok(t, map[string]any{"operation": "cancelOrder", "orderId": placed["orderId"], "market": "BTC"})
	})
}

// deleteBucket removes a KV bucket a test created on the shared NATS.
func deleteBucket(t *testing.T, url, bucket string) {
	nc, err := nats.Connect(url)
	if err != nil {
		return
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = js.DeleteKeyValue(ctx, bucket)
}
