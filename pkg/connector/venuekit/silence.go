package venuekit

import (
	"context"
	"fmt"
	"time"
)

// ReadWithin is the socket's next frame, or an error once it has sent
// nothing, pongs included, for d: a connection that died without closing
// (private streams ping and count the missed answers this way).
func (s *Socket) ReadWithin(ctx context.Context, d time.Duration) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	_, data, err := s.Read(rctx)
	if err != nil && ctx.Err() == nil && rctx.Err() != nil {
		return nil, fmt.Errorf("nothing received for %v", d)
	}
	return data, err
}
