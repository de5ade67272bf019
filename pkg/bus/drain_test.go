package bus

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestDrain: Drain returns once the connection is closed, after a reply
// that was being prepared when it was called has reached the requester;
// on a closed connection it is a no-op.
func TestDrain(t *testing.T) {
	emb, err := StartEmbedded(EmbeddedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Shutdown)
	responder, err := emb.Connect("responder")
	if err != nil {
		t.Fatal(err)
	}
	requester, err := emb.Connect("requester")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(requester.Close)
	taken := make(chan struct{})
	if _, err := responder.Subscribe("slow", func(m *nats.Msg) {
		close(taken)
		time.Sleep(200 * time.Millisecond) // work in progress while Drain starts
		_ = m.Respond([]byte("done"))
	}); err != nil {
		t.Fatal(err)
	}
	if err := responder.Flush(); err != nil {
		t.Fatal(err)
	}
	reply := make(chan string, 1)
	go func() {
		m, err := requester.Request("slow", nil, 5*time.Second)
		if err != nil {
			reply <- err.Error()
			return
		}
		reply <- string(m.Data)
	}()
	<-taken
	if err := Drain(responder, 5*time.Second); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	if !responder.IsClosed() {
		t.Fatal("Drain returned before the connection closed")
	}
	emb.Shutdown() // what standalone does next: nothing may be lost by now
	if got := <-reply; got != "done" {
		t.Fatalf("the reply in flight was lost: %s", got)
	}
	if err := Drain(responder, time.Second); err != nil {
		t.Fatalf("Drain of a closed connection: %v", err)
	}
}
