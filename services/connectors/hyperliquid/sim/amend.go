package sim

import (
	"strconv"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	hl "github.com/perpgate/perpgate/services/connectors/hyperliquid"
	"github.com/shopspring/decimal"
)

// modify is the "modify" action: the resting order oid takes the size and
// price (or trigger price) of the order wire, in place.
func (s *Sim) modify(user string, a *hl.ModifyAction) string {
	const gone = "Cannot modify canceled or filled order"
	as, ok := s.asset(a.Order.Asset)
	if !ok {
		return "Invalid asset"
	}
	id := strconv.FormatUint(a.Oid, 10)
	o, err := s.eng.Order(user, id)
	if err != nil || o.Market != as.Name || (o.Status != paper.Open && o.Status != paper.Pending) {
		return gone
	}
	if a.Order.IsBuy != (o.Side == paper.Buy) {
		return "Order side cannot be modified"
	}
	size, err1 := decimal.NewFromString(a.Order.Size)
	price, err2 := decimal.NewFromString(a.Order.Price)
	if err1 != nil || err2 != nil {
		return "Invalid order wire"
	}
	am := paper.Amend{Size: size}
	switch {
	case o.Type == paper.Limit && a.Order.Type.Limit != nil:
		am.Price = price
	case o.Type != paper.Limit && a.Order.Type.Trigger != nil:
		if am.TriggerPrice, err = decimal.NewFromString(a.Order.Type.Trigger.TriggerPx); err != nil {
			return "Invalid order wire"
		}
	default:
		return "Order type cannot be modified"
	}
	if _, err := s.eng.AmendOrder(user, id, am); err != nil {
		return "Order could not be modified: " + err.Error()
	}
	s.mu.Lock()
	ex := s.extra[id]
	ex.limitPx = a.Order.Price
	s.extra[id] = ex
	s.mu.Unlock()
	return ""
}

// maxScheduleTriggers is how many times a day a scheduled cancel may fire
// for one user (Hyperliquid's limit of 10).
const maxScheduleTriggers = 10

// scheduled is one user's dead man's switch.
type scheduled struct {
	timer *time.Timer
	day   string // UTC day of fired
	fired int
}

// scheduleCancel is the "scheduleCancel" action: at time (Unix ms, at
// least 5 s ahead) every open order of the user is cancelled; no time
// removes the schedule.
func (s *Sim) scheduleCancel(user string, a *hl.ScheduleCancelAction) string {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deadman == nil {
		s.deadman = map[string]*scheduled{}
	}
	sc := s.deadman[user]
	if sc == nil {
		sc = &scheduled{}
		s.deadman[user] = sc
	}
	if sc.timer != nil {
		sc.timer.Stop()
		sc.timer = nil
	}
	if a.Time == nil {
		return ""
	}
	at := time.UnixMilli(int64(*a.Time))
	if at.Before(now.Add(5 * time.Second)) {
		return "Scheduled cancel time too early, must be at least 5 seconds from now."
	}
	if day := now.UTC().Format(time.DateOnly); sc.day == day && sc.fired >= maxScheduleTriggers {
		return "Too many scheduled cancel triggers today."
	}
	sc.timer = time.AfterFunc(at.Sub(now), func() {
		open, _ := s.eng.OpenOrders(user, "")
		for _, o := range open {
			_, _ = s.eng.CancelOrder(user, o.ID)
		}
		s.mu.Lock()
		if day := s.now().UTC().Format(time.DateOnly); sc.day != day {
			sc.day, sc.fired = day, 0
		}
		sc.fired++
		s.mu.Unlock()
	})
	return ""
}
