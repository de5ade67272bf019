package sim

import (
	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/perpgate/perpgate/pkg/simkit/fapisim"
)

// modifyOrder is Modify Order (PUT order, fapisim.Modify).
func (s *Server) modifyOrder(q *req) (any, *apiErr) {
	return fapisim.Modify(s.eng, q, s.Lookup, func(o paper.Order) any { return s.Answer(o) })
}

// countdownCancelAll is Auto-Cancel All Open Orders (fapisim.Countdowns).
func (s *Server) countdownCancelAll(q *req) (any, *apiErr) {
	m, e := s.Market(q, true)
	if e != nil {
		return nil, e
	}
	return s.countdowns.Set(s.eng, q, m)
}

// income is Get Income History (fapisim.Income).
func (s *Server) income(q *req) (any, *apiErr) {
	m, e := s.Market(q, false)
	if e != nil {
		return nil, e
	}
	return fapisim.Income(s.eng, s.cfg.PageCap, q, m.Symbol)
}

// leverage is Change Initial Leverage (fapisim.Leverage).
func (s *Server) leverage(q *req) (any, *apiErr) {
	m, e := s.Market(q, true)
	if e != nil {
		return nil, e
	}
	return fapisim.Leverage(s.eng, q, m, func(err error) *apiErr { return fapisim.PlacementError(err, m) })
}

// marginType is Change Margin Type (fapisim.Margins).
func (s *Server) marginType(q *req) (any, *apiErr) {
	m, e := s.Market(q, true)
	if e != nil {
		return nil, e
	}
	return s.margins.Change(s.eng, q, m)
}

func (s *Server) marginOf(key, sym string) string { return s.margins.Of(key, sym) }
