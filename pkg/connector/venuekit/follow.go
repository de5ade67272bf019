package venuekit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// PrivateStream is one account socket of a venue that logs in with
// frames of its own and keeps the socket with a text ping: the connector
// gives its URL, its opening frames and its frame decoding, the kit the
// dialling, keep-alive and silence watch.
type PrivateStream struct {
	Venue string // names the venue in a dial failure: "Bybit private"
	Name  string // starts the stream's errors: "bybit private stream"
	URL   string
	// Open are written in order once connected (login, subscribe), each
	// as one JSON frame.
	Open []any
	// Ping is the text frame sent every Every; a socket silent for three
	// pings, pongs included, is dead.
	Ping  []byte
	Every time.Duration
	// Frame handles one frame; an error ends the stream.
	Frame func(ctx context.Context, ws *Socket, data []byte) error
}

// Run follows the socket until ctx ends or a frame fails.
func (p PrivateStream) Run(ctx context.Context) error {
	ws, err := Dial(ctx, p.Venue, p.URL)
	if err != nil {
		return err
	}
	defer ws.Close()
	for _, m := range p.Open {
		if err := ws.WriteJSON(ctx, m); err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
	}
	ws.Keepalive(p.Every, func(ctx context.Context) error { return ws.WriteText(ctx, p.Ping) })
	for {
		data, err := ws.ReadWithin(ctx, 3*p.Every)
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		if err := p.Frame(ctx, ws, data); err != nil {
			return err
		}
	}
}

// EachRow decodes a push's data, a JSON array of T, and calls f per row.
func EachRow[T any](data json.RawMessage, f func(T)) error {
	var rows []T
	if err := json.Unmarshal(data, &rows); err != nil {
		return err
	}
	for _, r := range rows {
		f(r)
	}
	return nil
}
