package standalone

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
)

// TestEmbeddedNATSListenRequiresUsers opens the embedded NATS to other
// processes (PERPGATE_NATS_LISTEN) and attacks it as a local process
// would: without a user it cannot even connect, so it can neither ask the
// keys service for a credential's decrypted secret nor call a connector;
// each service user is held to deploy/nats.conf's permissions. The
// gateway's own services, each logged in as its user, still trade and
// audit.
func TestEmbeddedNATSListenRequiresUsers(t *testing.T) {
	const edgePassword = "made-up-edge-password"
	g := startGateway(t, func(c *Config) {
		c.NATSListen = "127.0.0.1:0"
		c.NATSPasswords = map[string]bus.Password{"edge": edgePassword}
	})
	url := g.embedded.ClientURL()
	if url == "" {
		t.Fatal("the embedded NATS does not listen")
	}
	cred := g.Bootstrap().CredentialID
	secretSubject := contract.NewSubjects(g.cfg.Edge.SubjectPrefix).Secret(contract.Paper)
	op, _ := contract.Lookup(contract.OpGetMarkPrice)
	connectorSubject := contract.NewSubjects(g.cfg.Edge.SubjectPrefix).Operation(contract.Paper, op)

	t.Run("the services trade and audit under their users", func(t *testing.T) {
		g.ok(map[string]any{"operation": "getMarkPrice", "market": "BTC"})
		g.ok(map[string]any{"operation": "placeLimitOrder", "market": "BTC", "side": "BUY", "size": "0.01", "price": "1000"})
		checkFor(t, 10*time.Second, 50*time.Millisecond, func() error {
			page, err := g.Keys().AuditLog(context.Background(), g.Bootstrap().AccountID, time.Time{}, time.Time{}, 10, "", false)
			if err != nil {
				return err
			}
			for _, e := range page.Entries {
				if e.Operation == contract.OpPlaceLimitOrder && e.Code == "OK" {
					return nil
				}
			}
			return errors.New("the placement is not in the audit log")
		})
	})

	t.Run("an anonymous local client is refused", func(t *testing.T) {
		nc, err := nats.Connect(url, nats.Timeout(2*time.Second))
		if err == nil {
			defer nc.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			var secret contract.SecretResponse
			if err := bus.Request(ctx, nc, secretSubject, nil, contract.SecretRequest{CredentialID: cred}, &secret); err == nil {
				t.Fatalf("an anonymous client fetched %s's secret from %s", cred, secretSubject)
			}
			var mark json.RawMessage
			if err := bus.Request(ctx, nc, connectorSubject, nil, map[string]any{}, &mark); !bus.IsTimeout(err) {
				t.Fatalf("an anonymous client reached %s: %v", connectorSubject, err)
			}
			t.Fatal("an anonymous client connected")
		}
		if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
			t.Errorf("want an authorization error, got %v", err)
		}
	})

	path := filepath.Join(g.cfg.DataDir, natsUsersFile)
	kept := map[string]string{}
	t.Run("generated passwords are kept 0600 in the data dir", func(t *testing.T) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
		}
		data, _ := os.ReadFile(path)
		if err := json.Unmarshal(data, &kept); err != nil {
			t.Fatal(err)
		}
		if kept["connector-paper"] == "" || kept["keys"] == "" {
			t.Errorf("%s lacks generated passwords: users %v", path, keysOf(kept))
		}
		if _, ok := kept["edge"]; ok {
			t.Errorf("%s holds the edge's password though it came from the settings", path)
		}
	})

	t.Run("each user is held to its permissions", func(t *testing.T) {
		edge, edgeErrs := dialAs(t, url, bus.ServiceUser{Name: "edge"}.Auth(edgePassword))
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		var secret contract.SecretResponse
		if err := bus.Request(ctx, edge, secretSubject, nil, contract.SecretRequest{CredentialID: cred}, &secret); err == nil {
			t.Fatal("the edge's user fetched a secret")
		}
		edgeErrs.want(t, "Permissions Violation for Publish", secretSubject)

		paper, _ := dialAs(t, url, bus.ServiceUser{Name: "connector-paper"}.Auth(bus.Password(kept["connector-paper"])))
		ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel2()
		if err := bus.Request(ctx2, paper, secretSubject, nil, contract.SecretRequest{CredentialID: cred}, &secret); err != nil {
			t.Fatalf("connector-paper's user from %s: %v", natsUsersFile, err)
		}
	})

	// A permission the services need but lack shows only as a log line.
	for _, line := range strings.Split(g.logs.String(), "\n") {
		if strings.Contains(line, `"msg":"nats error"`) {
			t.Errorf("a service was refused by the embedded server: %s", line)
		}
	}
}

// TestNATSListenBeyondLoopbackNeedsPasswords: generated passwords are for
// this host's processes; opening the embedded NATS to the network needs
// every user's password from the settings.
func TestNATSListenBeyondLoopbackNeedsPasswords(t *testing.T) {
	env := map[string]string{"PERPGATE_NATS_LISTEN": "0.0.0.0:4222"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	_, err := LoadConfig(lookup)
	if err == nil {
		t.Fatal("a non-loopback PERPGATE_NATS_LISTEN without passwords was accepted")
	}
	for _, want := range []string{"PERPGATE_NATS_LISTEN", "NATS_EDGE_PASSWORD", "NATS_KEYS_PASSWORD", "NATS_CONNECTOR_PAPER_PASSWORD"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	for _, u := range bus.ServiceUsers(contract.NewSubjects("")) {
		env[u.PasswordVar()] = "made-up-" + u.Name
	}
	if _, err := LoadConfig(lookup); err != nil {
		t.Errorf("with every password set: %v", err)
	}
	if _, err := LoadConfig(func(k string) (string, bool) {
		return map[string]string{"PERPGATE_NATS_LISTEN": "127.0.0.1:4222"}[k], k == "PERPGATE_NATS_LISTEN"
	}); err != nil {
		t.Errorf("loopback without passwords (generated ones): %v", err)
	}
}

// dialAs connects to url as the services do (bus.Connect); want waits for
// an error the server reported to the connection.
func dialAs(t *testing.T, url string, auth bus.Auth) (*nats.Conn, *natsLog) {
	t.Helper()
	logs := &natsLog{}
	nc, err := bus.Connect(url, "test "+auth.User, auth, slog.New(slog.NewTextHandler(&logs.Output, nil)))
	if err != nil {
		t.Fatalf("connect as %s: %v", auth.User, err)
	}
	t.Cleanup(nc.Close)
	return nc, logs
}

type natsLog struct{ testenv.Output }

// want waits for a logged server error that says violation about subject.
func (l *natsLog) want(t *testing.T, violation, subject string) {
	t.Helper()
	checkFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		for _, line := range strings.Split(l.String(), "\n") {
			if strings.Contains(line, violation) && strings.Contains(line, subject) {
				return nil
			}
		}
		return errors.New("no " + violation + " on " + subject + " in " + l.String())
	})
}

func keysOf(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
