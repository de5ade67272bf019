package venuekit

import (
	"github.com/perpgate/perpgate/pkg/connector"
	"github.com/perpgate/perpgate/pkg/contract"
)

// Prechecked splits a batch before anything is sent: an order check
// refuses is answered rejected in out, and send lists the others' indexes
// in order.
func Prechecked(orders []connector.OrderRequest, check func(connector.OrderRequest) error) (out []contract.BatchOrderResult, send []int) {
	out = make([]contract.BatchOrderResult, len(orders))
	for i, o := range orders {
		if err := check(o); err != nil {
			ce, _ := contract.AsError(err)
			out[i] = contract.BatchOrderResult{Status: contract.StatusRejected, Error: ce}
			continue
		}
		send = append(send, i)
	}
	return out, send
}

// PlaceChunks places the orders send names in chunks of at most size with
// place, which fills out for its chunk and says whether any was placed. A
// call that fails before any order of the batch was placed ends the batch
// with its error (and no results); after that, a failure answers only its
// own chunk: UNKNOWN when the venue may have acted on it (a 5xx or
// timeout), else rejected.
func PlaceChunks(out []contract.BatchOrderResult, send []int, size int, place func(chunk []int) (bool, error)) ([]contract.BatchOrderResult, error) {
	placedAny := false
	for start := 0; start < len(send); start += size {
		chunk := send[start:min(start+size, len(send))]
		placed, err := place(chunk)
		if err == nil {
			placedAny = placedAny || placed
			continue
		}
		if !placedAny {
			return nil, err
		}
		ce, _ := contract.AsError(err)
		status := contract.StatusRejected
		if connector.Ambiguous(err) {
			status = contract.StatusUnknown
		}
		for _, i := range chunk {
			out[i] = contract.BatchOrderResult{Status: status, Error: ce}
		}
	}
	return out, nil
}

// AnyPlaced reports whether an order of chunk was not rejected.
func AnyPlaced(out []contract.BatchOrderResult, chunk []int) bool {
	for _, i := range chunk {
		if out[i].Status != contract.StatusRejected {
			return true
		}
	}
	return false
}
