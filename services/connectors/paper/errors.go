package paper

import (
	"context"
	"errors"

	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/connectors/paper/venue"
)

// reasons maps the venue's error kinds to upstream failure reasons.
var reasons = map[string]contract.Reason{
	venue.KindPostOnlyRejected:   contract.ReasonPostOnlyRejected,
	venue.KindInsufficientMargin: contract.ReasonInsufficientMargin,
	venue.KindReduceOnly:         contract.ReasonInvalidOrder,
	venue.KindOrderNotFound:      contract.ReasonOrderNotFound,
	venue.KindInvalidOrder:       contract.ReasonInvalidOrder,
	venue.KindBadRequest:         contract.ReasonInvalidOrder,
	venue.KindNotFound:           contract.ReasonUpstreamUnavailable,
	venue.KindInternal:           contract.ReasonUpstreamUnavailable,
}

// mapError turns what the venue client returned into a contract error. A
// passed deadline is left as is: the runtime reports EXCHANGE_TIMEOUT.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	var ve *venue.Error
	if !errors.As(err, &ve) {
		return contract.Upstream(contract.ReasonUpstreamUnavailable, "", "",
			"the paper venue is not reachable")
	}
	switch ve.Kind {
	case venue.KindUnknownMarket:
		return contract.Errorf(contract.CodeUnknownMarket, "%s", ve.Message)
	case venue.KindTooLarge: // the request asks for too much: no outage
		return contract.Errorf(contract.CodeInvalidRequest, "%s", ve.Message)
	}
	reason, ok := reasons[ve.Kind]
	if !ok {
		reason = contract.ReasonUnknown
	}
	return contract.Upstream(reason, ve.Kind, ve.Message, "paper exchange rejected the request: %s", ve.Message)
}
