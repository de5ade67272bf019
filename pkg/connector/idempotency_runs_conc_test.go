package connector

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestFileIdempotencySealsUnderLoad: placements from many goroutines
// while the store seals its records into runs every few dozen all succeed
// and each repeat reads its own result (under -race, the runs' locking).
func TestFileIdempotencySealsUnderLoad(t *testing.T) {
	s, err := NewFileIdempotency(filepath.Join(t.TempDir(), "idem.log"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.sealAt = 37
	ctx := context.Background()
	const workers, each = 8, 150
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				k := fmt.Sprintf("w%d-order-%d", w, i)
				if _, claimed, err := s.Claim(ctx, k, Record{Deadline: time.Now().Add(time.Minute)}); err != nil || !claimed {
					errs <- fmt.Errorf("claim %s: claimed=%v err=%v", k, claimed, err)
					return
				}
				if err := s.Complete(ctx, k, Record{Result: json.RawMessage(`{"orderId":"` + k + `"}`)}); err != nil {
					errs <- err
					return
				}
				old := fmt.Sprintf("w%d-order-%d", w, i/2)
				if got, claimed, err := s.Claim(ctx, old, Record{}); err != nil || claimed || string(got.Result) != `{"orderId":"`+old+`"}` {
					errs <- fmt.Errorf("repeat of %s: %+v claimed=%v err=%v", old, got, claimed, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s.mu.Lock()
	runs := len(s.runs)
	s.mu.Unlock()
	if runs < 10 {
		t.Fatalf("%d runs; the test needs many seals", runs)
	}
}
