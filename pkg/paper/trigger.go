package paper

import (
	"container/heap"

	"github.com/shopspring/decimal"
)

// A market's live orders are kept in four heaps by the price at which
// mark fills or fires them, so a walk step looks only at the orders it
// crosses, never at every resting one: resting buys (filled when mark
// falls to their price, highest first), resting sells (lowest first),
// triggers that fire when mark falls to them (highest first) and those
// that fire when it rises (lowest first).
type priceHeap struct {
	orders []*order
	high   bool // the highest price on top
}

func (h *priceHeap) Len() int { return len(h.orders) }
func (h *priceHeap) Less(i, j int) bool {
	a, b := h.orders[i].level(), h.orders[j].level()
	if c := a.Cmp(b); c != 0 {
		return (c > 0) == h.high
	}
	return h.orders[i].seq < h.orders[j].seq
}
func (h *priceHeap) Swap(i, j int) {
	h.orders[i], h.orders[j] = h.orders[j], h.orders[i]
	h.orders[i].heapIdx, h.orders[j].heapIdx = i, j
}
func (h *priceHeap) Push(x any) {
	o := x.(*order)
	o.heapIdx = len(h.orders)
	h.orders = append(h.orders, o)
}
func (h *priceHeap) Pop() any {
	n := len(h.orders) - 1
	o := h.orders[n]
	h.orders[n] = nil
	h.orders = h.orders[:n]
	o.heapIdx = -1
	return o
}

// level is the price at which mark reaches o: its limit or its trigger.
func (o *order) level() decimal.Decimal {
	if o.Type == Limit {
		return o.Price
	}
	return o.TriggerPrice
}

// marketOrders indexes a market's live orders of every account.
type marketOrders struct {
	heaps [4]priceHeap // resting buys, resting sells, fire below, fire above
	n     int
}

func newMarketOrders() *marketOrders {
	return &marketOrders{heaps: [4]priceHeap{{high: true}, {}, {high: true}, {}}}
}

// which is the heap o belongs in.
func which(o *order) int {
	if o.Type == Limit {
		return sideIndex(o.Side)
	}
	if (o.Type == StopMarket) == (o.Side == Sell) { // fires when mark falls
		return 2
	}
	return 3
}

func (mo *marketOrders) add(o *order) {
	heap.Push(&mo.heaps[which(o)], o)
	mo.n++
}

func (mo *marketOrders) remove(o *order) {
	if o.heapIdx < 0 {
		return
	}
	heap.Remove(&mo.heaps[which(o)], o.heapIdx)
	mo.n--
}

// crossed takes out and returns the orders mark fills or fires.
func (mo *marketOrders) crossed(mark decimal.Decimal) []*order {
	var out []*order
	for i := range mo.heaps {
		h := &mo.heaps[i]
		for h.Len() > 0 {
			top := h.orders[0]
			reached := mark.Cmp(top.level())
			if h.high && reached > 0 || !h.high && reached < 0 {
				break
			}
			heap.Pop(h)
			mo.n--
			out = append(out, top)
		}
	}
	return out
}
