// Package connectortest serves an adapter through the shared runtime on a
// test NATS, with a stand-in keys service, and calls it as the edge does.
package connectortest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/telemetry"
	"github.com/perpgate/perpgate/pkg/testenv"
)

// Replica is one connector replica on its own NATS connection.
type Replica struct {
	NC       *nats.Conn
	Runtime  *connector.Runtime
	subjects contract.Subjects
	cred     contract.CredentialInfo
}

// Options describe the replica; Subjects must be unique per test.
type Options struct {
	URL      string // NATS
	Subjects contract.Subjects
	Env      contract.Environment
	Secret   contract.Secret
	Stream   connector.StreamConfig
	Metrics  *telemetry.Metrics // optional
}

// Serve starts a runtime for a, answering one credential's secret
// (cred-1 of acct-1 on opts.Env) itself; both stop when the test ends.
func Serve(t testing.TB, a connector.Adapter, opts Options) *Replica {
	t.Helper()
	nc, err := nats.Connect(opts.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	x := a.Exchange()
	info := contract.CredentialInfo{ID: "cred-1", AccountID: "acct-1", Exchange: x, Environment: opts.Env}
	sub, err := nc.QueueSubscribe(opts.Subjects.Secret(x), "keys", func(m *nats.Msg) {
		b, _ := json.Marshal(contract.SecretResponse{Credential: info, Secret: opts.Secret})
		_ = m.Respond(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	rt := connector.New(connector.Config{Subjects: opts.Subjects, Stream: opts.Stream, Metrics: opts.Metrics}, a, nc,
		connector.NewMemoryIdempotency(time.Now), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := rt.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Stop() })
	return &Replica{NC: nc, Runtime: rt, subjects: opts.Subjects, cred: info}
}

// Call sends one operation to the exchange's connectors, as the edge does,
// and decodes the answer into out.
func (r *Replica) Call(ctx context.Context, op string, params, out any) error {
	o, ok := contract.Lookup(op)
	if !ok {
		return contract.Errorf(contract.CodeUnknownOperation, "no operation %s", op)
	}
	raw, _ := json.Marshal(params)
	req := contract.ConnectorRequest{RequestID: "r-" + op, Operation: op, AccountID: r.cred.AccountID, Credential: r.cred, Params: raw}
	return bus.RequestConnector(ctx, r.NC, r.subjects.Operation(r.cred.Exchange, o), req, out)
}

// MarkPrice calls getMarkPrice for market and fails t on an error.
func (r *Replica) MarkPrice(t testing.TB, market string) contract.MarkPriceResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var res contract.MarkPriceResult
	if err := r.Call(ctx, contract.OpGetMarkPrice, contract.MarketParams{Market: market}, &res); err != nil {
		t.Fatalf("getMarkPrice %s: %v", market, err)
	}
	return res
}

// Eventually is testenv.Poll for a condition without an error to show.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	testenv.Poll(t, what, within, func() error {
		if cond() {
			return nil
		}
		return errors.New("not yet")
	})
}
