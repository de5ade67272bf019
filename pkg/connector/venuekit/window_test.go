package venuekit

import (
	"testing"
	"time"
)

func TestWindowsPaceAndBlock(t *testing.T) {
	w := NewWindows(2 * time.Second)
	t0 := time.Unix(1000, 0)
	for i := range 2 {
		if wait, blocked := w.Admit(t0, "k", 2); wait != 0 || blocked != 0 {
			t.Fatalf("send %d: wait %v blocked %v, want room", i, wait, blocked)
		}
	}
	// The third send in the window waits for the first to leave it.
	if wait, _ := w.Admit(t0.Add(500*time.Millisecond), "k", 2); wait != 1500*time.Millisecond {
		t.Fatalf("third send waits %v, want 1.5s", wait)
	}
	if wait, _ := w.Admit(t0, "other", 2); wait != 0 {
		t.Fatalf("another key waits %v", wait)
	}
	if wait, _ := w.Admit(t0, "free", 0); wait != 0 {
		t.Fatalf("no budget waits %v", wait)
	}
	if s := w.Block(t0, "k", 2500*time.Millisecond); s != 3 {
		t.Fatalf("block answers %d s, want 3", s)
	}
	if _, blocked := w.Admit(t0.Add(time.Second), "k", 2); blocked != 1500*time.Millisecond {
		t.Fatalf("blocked %v, want 1.5s", blocked)
	}
	if _, blocked := w.Admit(t0.Add(3*time.Second), "k", 2); blocked != 0 {
		t.Fatalf("still blocked after the block ended: %v", blocked)
	}
}
