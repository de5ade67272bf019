package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	neturl "net/url"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/pkg/telemetry"
)

// Connect dials an external NATS server as auth.User with reconnects
// forever, so a restarting server does not take the service down. Replies
// come back under auth.InboxPrefix. Errors the server reports later
// (permission violations, slow consumers) and connection changes are
// logged to log (nil discards them), since nothing else would show them.
func Connect(url, name string, auth Auth, log *slog.Logger) (*nats.Conn, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts := append(clientOptions(name, auth, log),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.Timeout(5*time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("nats reconnected", "url", redactURL(nc.ConnectedUrl()))
			logMaxPayload(nc, log)
		}),
	)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to nats at %s as %q: %w", redactURL(url), auth.User, err)
	}
	logMaxPayload(nc, log)
	return nc, nil
}

// clientOptions name the connection, log in as auth.User with replies
// under auth.InboxPrefix, and log the errors the server reports later
// (permission violations, slow consumers), since nothing else shows them.
func clientOptions(name string, auth Auth, log *slog.Logger) []nats.Option {
	opts := []nats.Option{
		nats.Name(name),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			if sub != nil {
				log.Warn("nats error", "subject", sub.Subject, "err", err)
				return
			}
			log.Warn("nats error", "err", err)
		}),
	}
	if auth.User != "" {
		opts = append(opts, nats.UserInfo(auth.User, auth.Password.Reveal()))
	}
	if auth.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(auth.InboxPrefix))
	}
	return opts
}

// MaxPayloadWanted is the message size the gateway is sized for (and the
// embedded server allows): long order lists fit.
const MaxPayloadWanted = 8 << 20

// logMaxPayload says how large a message the server takes, warning when
// it is below MaxPayloadWanted: a larger answer is refused (connectors
// say so to the client), and would otherwise be dropped unseen.
func logMaxPayload(nc *nats.Conn, log *slog.Logger) {
	limit := nc.MaxPayload()
	if limit < MaxPayloadWanted {
		log.Warn("NATS max_payload is below what the gateway is sized for: answers larger than it are refused "+
			"(getOrders with thousands of orders); set max_payload: 8MB in the NATS server's configuration",
			"max_payload", limit, "wanted", MaxPayloadWanted)
		return
	}
	log.Info("nats connected", "max_payload", limit)
}

// redactURL hides passwords in a comma-separated list of server URLs
// (nats://user:pass@host is a valid way to give credentials).
func redactURL(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		if u, err := neturl.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}

// Request sends req as JSON to subject and decodes the reply into resp. The
// context bounds the wait and its deadline travels in the
// contract.HeaderDeadline header. A micro error reply comes back as the
// *contract.Error it carried; no responders is EXCHANGE_UNAVAILABLE-like
// ErrNoResponders and a passed deadline is context.DeadlineExceeded, both
// wrapped so callers map them with errors.Is. A non-nil hdr becomes the
// message's header: Request adds its own fields to it.
func Request(ctx context.Context, nc *nats.Conn, subject string, hdr nats.Header, req, resp any) error {
	data, err := encode(req)
	if err != nil {
		return fmt.Errorf("encode request for %s: %w", subject, err)
	}
	if hdr == nil {
		hdr = make(nats.Header, 2)
	}
	envelopeHeader(ctx, hdr)
	return send(ctx, nc, &nats.Msg{Subject: subject, Data: data, Header: hdr}, resp, true)
}

// RequestConnector sends req to the connector endpoint subject as the
// connector expects it: framed in the body ahead of the parameters
// (contract.ConnectorRequest.AppendFrame), with the trace in header fields
// when there is one; or, when req cannot be framed, the envelope in header
// fields. It waits for the answer until ctx's deadline, but not on
// ctx.Done: a request on its way is worked on whether its caller still
// waits or not (a client that hung up), and watching Done would arm a
// timer and register with the parent context on every request.
func RequestConnector(ctx context.Context, nc *nats.Conn, subject string, req contract.ConnectorRequest, resp any) error {
	deadline, _ := ctx.Deadline()
	msg := &nats.Msg{Subject: subject}
	buf := frames.Get().(*[]byte)
	defer putFrame(buf)
	var framed bool
	if msg.Data, framed = req.AppendFrame((*buf)[:0], deadline); framed {
		*buf = msg.Data // keep what it grew to
		msg.Header = telemetry.TraceHeader(ctx)
		return send(ctx, nc, msg, resp, false)
	}
	hdr, err := req.Header()
	if err != nil {
		return fmt.Errorf("encode request for %s: %w", subject, err)
	}
	envelopeHeader(ctx, hdr)
	msg.Header, msg.Data = hdr, req.Params
	if msg.Data == nil {
		msg.Data = json.RawMessage(`{}`)
	}
	return send(ctx, nc, msg, resp, false)
}

// frames are buffers for framed connector requests: nats.go has copied a
// message's data into its write buffer by the time the request returns.
var frames = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// putFrame keeps buf for a later request unless a large one grew it.
func putFrame(buf *[]byte) {
	if cap(*buf) <= 64<<10 {
		frames.Put(buf)
	}
}

// envelopeHeader adds the context's trace and deadline to hdr.
func envelopeHeader(ctx context.Context, hdr nats.Header) {
	telemetry.Inject(ctx, hdr)
	if dl, ok := ctx.Deadline(); ok {
		hdr.Set(contract.HeaderDeadline, dl.UTC().Format(time.RFC3339Nano))
	}
}

// send sends msg and decodes the reply into resp as Request says; without
// watchDone it waits for the reply only until ctx's deadline, with nats'
// pooled timer, and not on ctx.Done.
func send(ctx context.Context, nc *nats.Conn, msg *nats.Msg, resp any, watchDone bool) error {
	subject := msg.Subject
	// While reconnecting, nats.go would buffer the request and wait out the
	// whole deadline; a caller should hear at once that the bus is down.
	if !nc.IsConnected() {
		return fmt.Errorf("request %s: %w", subject, ErrDisconnected)
	}
	var reply *nats.Msg
	var err error
	if dl, ok := ctx.Deadline(); ok && !watchDone {
		if err = ctx.Err(); err == nil {
			reply, err = nc.RequestMsg(msg, time.Until(dl))
		}
	} else {
		reply, err = nc.RequestMsgWithContext(ctx, msg)
	}
	if err != nil {
		return fmt.Errorf("request %s: %w", subject, err)
	}
	if err := ReplyError(reply); err != nil {
		return err
	}
	if resp == nil {
		return nil
	}
	if raw, ok := resp.(*json.RawMessage); ok {
		*raw = append((*raw)[:0], reply.Data...)
		return nil
	}
	if err := json.Unmarshal(reply.Data, resp); err != nil {
		return fmt.Errorf("decode reply of %s: %w", subject, err)
	}
	return nil
}

// encode is json.Marshal, except that JSON the caller already encoded is
// sent as is (Marshal would validate and compact it again).
func encode(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(v)
}

// ReplyError returns the *contract.Error carried by a micro error reply, or
// nil when the reply is a success.
func ReplyError(reply *nats.Msg) error {
	code := reply.Header.Get(micro.ErrorCodeHeader)
	if code == "" {
		return nil
	}
	var ce contract.Error
	if err := json.Unmarshal(reply.Data, &ce); err != nil || ce.Code == "" {
		return &contract.Error{Code: contract.CodeInternal, Message: contract.InternalMessage}
	}
	return &ce
}

// RespondError answers a micro request with err. A *contract.Error travels
// as is; anything else becomes INTERNAL_ERROR with the fixed message.
func RespondError(req micro.Request, err error) error {
	ce, _ := contract.AsError(err)
	body, mErr := json.Marshal(ce)
	if mErr != nil {
		return mErr
	}
	return req.Error(string(ce.Code), ce.Message, body)
}

// Answer publishes data as the reply to a request whose reply subject is
// reply. Workers that answer a micro request after its handler returned use
// Answer and AnswerError instead of the request's own Respond and Error:
// those record the outcome on the request, which micro reads for its stats
// as soon as the handler returns (a data race). micro's error count then
// misses these requests; the Prometheus upstream series count them.
func Answer(nc *nats.Conn, reply string, data []byte) error {
	if reply == "" {
		return nil // a publish, not a request: nobody waits
	}
	return nc.PublishMsg(&nats.Msg{Subject: reply, Data: data})
}

// AnswerError is Answer for a failure, in the wire form of micro's error
// replies (code and description headers, the *contract.Error as the body)
// so that Request on the other side turns it back into the same error.
func AnswerError(nc *nats.Conn, reply string, err error) error {
	if reply == "" {
		return nil
	}
	ce, _ := contract.AsError(err)
	body, mErr := json.Marshal(ce)
	if mErr != nil {
		return mErr
	}
	return nc.PublishMsg(&nats.Msg{Subject: reply, Data: body, Header: nats.Header{
		micro.ErrorHeader:     []string{ce.Message},
		micro.ErrorCodeHeader: []string{string(ce.Code)},
	}})
}

// RespondJSON answers a micro request with v as JSON.
func RespondJSON(req micro.Request, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return RespondError(req, fmt.Errorf("encode reply: %w", err))
	}
	return req.Respond(body)
}

// Deadline reads the absolute deadline a request carries; ok is false when
// it carries none or an unreadable one.
func Deadline(h micro.Headers) (time.Time, bool) { return contract.ReadDeadline(h) }

// ErrDisconnected means the connection to NATS is down (reconnecting or
// closed), so a request was not sent.
var ErrDisconnected = errors.New("not connected to nats")

// IsDisconnected reports whether err means the bus itself was unreachable.
func IsDisconnected(err error) bool {
	return errors.Is(err, ErrDisconnected) || errors.Is(err, nats.ErrConnectionClosed) ||
		errors.Is(err, nats.ErrDisconnected) || errors.Is(err, nats.ErrConnectionReconnecting)
}

// IsNoResponders reports whether err means no service listens on the subject.
func IsNoResponders(err error) bool { return errors.Is(err, nats.ErrNoResponders) }

// IsTimeout reports whether err means the deadline passed before a reply.
func IsTimeout(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)
}

// Drain drains nc and waits until it is closed: subscriptions stop taking
// messages, what they took is handled, replies and publishes are flushed.
// nats.Conn.Drain only starts that, so a process that exits (or an embedded
// server that shuts down) right after it can lose replies in flight. After
// timeout the connection is closed as it is.
func Drain(nc *nats.Conn, timeout time.Duration) error {
	closed := make(chan struct{})
	var once sync.Once
	nc.SetClosedHandler(func(*nats.Conn) { once.Do(func() { close(closed) }) })
	if err := nc.Drain(); err != nil {
		if errors.Is(err, nats.ErrConnectionClosed) {
			return nil
		}
		if errors.Is(err, nats.ErrConnectionReconnecting) {
			// Nothing can be flushed to a server that is not there; a
			// service stopping during a NATS outage still exits cleanly.
			nc.Close()
			return nil
		}
		return fmt.Errorf("drain nats connection: %w", err)
	}
	select {
	case <-closed:
		return nil
	case <-time.After(timeout):
		nc.Close()
		return fmt.Errorf("drain nats connection: not done within %s", timeout)
	}
}
