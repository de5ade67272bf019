package connector

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/testenv"
	"github.com/shopspring/decimal"
)

// TestFileLedgerConcurrentSurvivesRestart: reservations made at once all
// count, and the day's total is the same after a restart.
func TestFileLedgerConcurrentSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notional.log")
	l, err := NewFileLedger(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	day := ledgerDay(time.Now())
	ten, limit := decimal.NewFromInt(10), decimal.NewFromInt(1000)
	const n = 20
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, ok, err := l.Reserve(ctx, "key-1", day, fmt.Sprintf("order-%d", i), ten, limit)
			if err == nil && !ok {
				err = fmt.Errorf("order-%d refused under the limit", i)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Release(ctx, "key-1", day, "order-3"); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := NewFileLedger(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	used, err := again.Used(ctx, "key-1", day)
	if err != nil {
		t.Fatal(err)
	}
	if want := decimal.NewFromInt(190); !used.Equal(want) {
		t.Fatalf("after the restart the day's total is %s; want %s", used, want)
	}
}

// TestRedisLedgerBoundsAmounts: an amount whose millionths do not fit the
// ledger's integers is refused with an error, never wrapped into a
// negative total that would let later orders through.
func TestRedisLedgerBoundsAmounts(t *testing.T) {
	rdb, prefix := testenv.RedisPrefix(t)
	l := NewRedisLedger(rdb, prefix+":notional:")
	ctx, day := context.Background(), ledgerDay(time.Now())
	huge, limit := decimal.RequireFromString("10000000000000"), decimal.RequireFromString("100000000000000")
	if _, ok, err := l.Reserve(ctx, "key-1", day, "huge", huge, limit); err == nil || ok {
		t.Fatalf("reserving %s: ok=%v err=%v, want an error", huge, ok, err)
	}
	used, err := l.Used(ctx, "key-1", day)
	if err != nil || !used.IsZero() {
		t.Fatalf("after the refused reservation the day's total is %s (%v), want 0", used, err)
	}
	// A cap above the ledger's range still counts what fits.
	if total, ok, err := l.Reserve(ctx, "key-1", day, "small", decimal.NewFromInt(1000), limit); err != nil || !ok || !total.Equal(decimal.NewFromInt(1000)) {
		t.Fatalf("reserving 1000 under a cap of %s: total=%s ok=%v err=%v", limit, total, ok, err)
	}
}

// TestDailyCapRefusesBeyondLedgerRange: an order the ledger cannot count
// is refused by name, on every ledger, and never reaches the venue.
func TestDailyCapRefusesBeyondLedgerRange(t *testing.T) {
	v := &venueFake{orders: map[string]FoundOrder{}}
	d := newDispatch(v, NewMemoryIdempotency(nil))
	capped := decimal.RequireFromString("1000000000000")
	d.guards = &contract.Guards{MaxDailyNotional: &capped}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := d.run(ctx, limitOp, limit("huge", "1000000")) // 1,000,000 BTC at 50,000
	ce, _ := contract.AsError(err)
	if ce.Code != contract.CodeDailyNotionalExceeded || !strings.Contains(ce.Message, MaxLedgerNotional.String()) {
		t.Fatalf("got %v, want DAILY_NOTIONAL_EXCEEDED naming %s", err, MaxLedgerNotional)
	}
	if v.placed != 0 {
		t.Fatalf("placed %d orders, want none", v.placed)
	}
}
