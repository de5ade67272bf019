package venuekit

import (
	"context"
	"testing"
	"time"
)

// TestNoncesIn: a counter in microseconds counts from the clock given to
// NextAt (the venue's, as Aster needs) and stays strictly increasing.
func TestNoncesIn(t *testing.T) {
	at := time.UnixMicro(1_735_689_601_000_123)
	n := NewNonces(func() time.Time { return at.Add(-time.Hour) }).In(time.Microsecond)
	ctx := context.Background()
	first, _ := n.NextAt(ctx, "s", at)
	second, _ := n.NextAt(ctx, "s", at)
	other, _ := n.NextAt(ctx, "t", at)
	if first != 1_735_689_601_000_123 || second != first+1 || other != first {
		t.Errorf("nonces %d %d %d", first, second, other)
	}
	if ms, _ := NewNonces(func() time.Time { return at }).Next(ctx, "s"); ms != 1_735_689_601_000 {
		t.Errorf("default unit: %d, want milliseconds", ms)
	}
}
