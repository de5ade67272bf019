package sim

// The market-data websocket (simkit.MarketStreams) on Binance's routes
// (fact sheet §12): /market/stream and /public/stream (also /market/ws,
// /public/ws, /stream, /ws).

func isStreamPath(p string) bool {
	switch p {
	case "/market/stream", "/public/stream", "/market/ws", "/public/ws", "/stream", "/ws":
		return true
	}
	return false
}

// StreamDials counts websocket connections accepted so far.
func (s *Server) StreamDials() int { return s.Streams.Dials() }

// DropStreams closes every websocket, as the venue does at the 24 h limit.
func (s *Server) DropStreams() { s.Streams.Drop() }

// SkipDepthUpdates numbers the next n depth events of symbol but does not
// send them: the client sees a gap in pu.
func (s *Server) SkipDepthUpdates(symbol string, n int) { s.Streams.SkipDepthUpdates(symbol, n) }
