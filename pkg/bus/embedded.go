package bus

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Embedded is a NATS server running inside this process.
type Embedded struct {
	srv *server.Server
}

// EmbeddedConfig configures StartEmbedded.
type EmbeddedConfig struct {
	// Listen, when non-empty ("127.0.0.1:4222"), also accepts outside
	// clients; otherwise only in-process connections are possible.
	Listen string
	// StoreDir enables JetStream under this directory when non-empty.
	StoreDir string
	// Logins, required with Listen, are the only clients the server then
	// accepts, in process or not, each held to its user's permissions:
	// without them any local process could ask for decrypted secrets.
	Logins []Login
}

// Login is a ServiceUser with its password.
type Login struct {
	User     ServiceUser
	Password Password
}

// StartEmbedded starts an embedded NATS server and waits until it accepts
// connections. It never installs signal handlers (the caller owns them).
func StartEmbedded(cfg EmbeddedConfig) (*Embedded, error) {
	opts := &server.Options{
		ServerName: "perpgate-embedded",
		NoSigs:     true,
		NoLog:      true,
		DontListen: cfg.Listen == "",
		MaxPayload: 8 << 20,
	}
	if cfg.Listen != "" {
		if len(cfg.Logins) == 0 {
			return nil, fmt.Errorf("embedded nats listening at %s needs users", cfg.Listen)
		}
		host, port, err := splitHostPort(cfg.Listen)
		if err != nil {
			return nil, err
		}
		opts.Host, opts.Port = host, port
	}
	opts.Users = natsUsers(cfg.Logins)
	if cfg.StoreDir != "" {
		opts.JetStream, opts.StoreDir = true, cfg.StoreDir
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("configure embedded nats: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("embedded nats not ready within 10s")
	}
	return &Embedded{srv: srv}, nil
}

// natsUsers are the server's users for logins, with the permissions
// deploy/nats.conf gives them.
func natsUsers(logins []Login) []*server.User {
	var users []*server.User
	for _, l := range logins {
		p := &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: l.User.Publish},
			Subscribe: &server.SubjectPermission{Allow: l.User.Subscribe},
		}
		if l.User.AllowResponses {
			// nats.conf's allow_responses: true.
			p.Response = &server.ResponsePermission{MaxMsgs: server.DEFAULT_ALLOW_RESPONSE_MAX_MSGS,
				Expires: server.DEFAULT_ALLOW_RESPONSE_EXPIRATION}
		}
		users = append(users, &server.User{Username: l.User.Name, Password: l.Password.Reveal(), Permissions: p})
	}
	return users
}

// Connect returns an in-process client connection without a user, which a
// server started with Logins refuses.
func (e *Embedded) Connect(name string) (*nats.Conn, error) { return e.ConnectAs(name, Auth{}, nil) }

// ConnectAs returns an in-process client connection logged in as
// auth.User; errors the server reports later go to log (nil discards
// them), as with Connect.
func (e *Embedded) ConnectAs(name string, auth Auth, log *slog.Logger) (*nats.Conn, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// No write deadline on the in-process pipe: nats.go would arm and stop
	// a timer on every flush, and only a wedged server in this very
	// process could hold a write, which no deadline would cure.
	opts := append(clientOptions(name, auth, log), nats.InProcessServer(e.srv), nats.MaxReconnects(-1), nats.FlusherTimeout(0))
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to embedded nats: %w", err)
	}
	return nc, nil
}

// ClientURL is the URL outside clients use, empty when not listening.
func (e *Embedded) ClientURL() string {
	if e.srv.Addr() == nil {
		return ""
	}
	return e.srv.ClientURL()
}

// Interest is how many subscriptions on the server match subject. A client
// whose connection was cut keeps its subscriptions until the server has
// read the close, so tests that cut one wait on this before publishing.
func (e *Embedded) Interest(subject string) int { return e.srv.GlobalAccount().Interest(subject) }

// Shutdown stops the server and waits for it to finish.
func (e *Embedded) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("embedded nats listen address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("embedded nats listen address %q: bad port", addr)
	}
	if port == 0 {
		port = server.RANDOM_PORT // the server reads 0 as its default, 4222
	}
	return host, port, nil
}
