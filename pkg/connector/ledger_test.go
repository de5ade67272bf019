package connector

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

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
