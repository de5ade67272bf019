package venue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/paper"
)

// The paper venue's private stream, as a venue's private websocket is: it
// publishes each account's raw engine events on core NATS
// (contract.Subjects.PaperVenueAccount), in order, numbered per account
// and run, and says hello when it starts. connector-paper follows it as
// any connector follows its venue's stream (connector.AccountFeeder); the
// gateway's runtime reconciles and publishes the events.

// AccountFrame is one frame of an account's private stream. Boot names the
// venue's run; Seq counts the account's frames in that run from 1, so a
// follower notices a frame it missed.
type AccountFrame struct {
	Boot  string      `json:"boot"`
	Seq   uint64      `json:"seq"`
	Event paper.Event `json:"event"`
}

// helloFrame is the venue's word that it (re)started.
type helloFrame struct {
	Boot string `json:"boot"`
}

// PublishAccountFeeds publishes every account change of e on nc and ticks
// the engine (TickEvery), until stop is called.
func PublishAccountFeeds(e *paper.Engine, nc *nats.Conn, subjects contract.Subjects, log *slog.Logger) (stop func()) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	boot := hex.EncodeToString(b[:])
	var mu sync.Mutex
	seqs := map[string]uint64{}
	e.OnEvent(func(ev paper.Event) { // under the engine's lock: the frames go out in the engine's order
		mu.Lock()
		seqs[ev.Account]++
		f := AccountFrame{Boot: boot, Seq: seqs[ev.Account], Event: ev}
		mu.Unlock()
		data, err := json.Marshal(f)
		if err != nil {
			log.Error("paper account frame not encoded", "err", err)
			return
		}
		if err := nc.Publish(subjects.PaperVenueAccount(ev.Account), data); err != nil {
			log.Warn("paper account frame not sent; the follower reconciles", "account", ev.Account, "err", err)
		}
	})
	hello, _ := json.Marshal(helloFrame{Boot: boot})
	_ = nc.Publish(subjects.PaperVenueHello(), hello)
	return tick(e)
}

// ErrFeedGap ends a follow when the venue restarted or a frame was lost:
// the follower reconnects and reconciles.
var ErrFeedGap = errors.New("paper venue private stream: a frame was missed or the venue restarted")

// FollowAccount follows one account's private stream on nc: it subscribes,
// calls ready once the server has the subscription, then emit for every
// frame, until ctx ends (ctx.Err()) or a frame is missed (ErrFeedGap).
func FollowAccount(ctx context.Context, nc *nats.Conn, subjects contract.Subjects, account string, ready func(), emit func(paper.Event)) error {
	msgs := make(chan *nats.Msg, 4096)
	var subs []*nats.Subscription
	defer func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}()
	for _, subj := range []string{subjects.PaperVenueAccount(account), subjects.PaperVenueHello()} {
		s, err := nc.ChanSubscribe(subj, msgs)
		if err != nil {
			return fmt.Errorf("paper venue private stream: %w", err)
		}
		subs = append(subs, s)
	}
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := nc.FlushWithContext(fctx)
	cancel()
	if err != nil {
		return fmt.Errorf("paper venue private stream: %w", err)
	}
	ready()
	var boot string
	var seq uint64
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m := <-msgs:
			if m.Subject == subjects.PaperVenueHello() {
				return fmt.Errorf("%w (hello)", ErrFeedGap)
			}
			var f AccountFrame
			if err := json.Unmarshal(m.Data, &f); err != nil {
				return fmt.Errorf("paper venue private stream: %w", err)
			}
			if boot != "" && (f.Boot != boot || f.Seq != seq+1) {
				return fmt.Errorf("%w (frame %d after %d)", ErrFeedGap, f.Seq, seq)
			}
			boot, seq = f.Boot, f.Seq
			emit(f.Event)
		}
	}
}

// EventData is ev in the contract's event shape; false for a kind the
// contract does not know.
func EventData(ev paper.Event) (any, bool) {
	switch ev.Kind {
	case paper.EventOrder:
		return orderEvent(*ev.Order), true
	case paper.EventFill:
		return fillEvent(*ev.Fill), true
	case paper.EventPosition:
		return positionEvent(*ev.Position), true
	case paper.EventBalance:
		return balanceEvent(*ev.Balance), true
	case paper.EventFunding:
		f := ev.Funding
		return contract.FundingEvent{Market: f.Market, Amount: f.Amount, Rate: ptr(f.Rate), PositionSize: ptr(f.PositionSize)}, true
	}
	return nil, false
}
