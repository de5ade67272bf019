package bus

import (
	"strings"

	"github.com/perpgate/perpgate/pkg/contract"
)

// ServiceUser is one NATS user of a perpgate deployment: a service and the
// subjects it may use. ServiceUsers is the one definition of them: the
// embedded server of `perpgate serve` (when it listens) is configured from
// it, and deploy/nats.conf is generated from it (make nats-conf), so the
// two cannot drift apart.
type ServiceUser struct {
	Name string
	// Why explains the permissions; it is the comment above the user in
	// deploy/nats.conf.
	Why       string
	Publish   []string
	Subscribe []string
	// AllowResponses lets a micro service answer the requests it
	// receives: one publish to each request's reply subject.
	AllowResponses bool
}

// InboxPrefix roots the user's replies; the user may subscribe below it
// only, so no service reads the replies sent to another.
func (u ServiceUser) InboxPrefix() string { return "_INBOX_" + u.Name }

// PasswordVar is the environment variable holding the user's password, in
// deploy/nats.conf ($NATS_EDGE_PASSWORD) and for `perpgate serve`'s
// embedded server alike.
func (u ServiceUser) PasswordVar() string {
	return "NATS_" + strings.ToUpper(strings.ReplaceAll(u.Name, "-", "_")) + "_PASSWORD"
}

// Auth is how the service logs in as u with password.
func (u ServiceUser) Auth(password Password) Auth {
	return Auth{User: u.Name, Password: password, InboxPrefix: u.InboxPrefix()}
}

// ServiceUsers are the users of every perpgate service under subjects'
// prefix: the edge, the keys service and one connector per exchange.
func ServiceUsers(s contract.Subjects) []ServiceUser {
	users := []ServiceUser{edgeUser(s), paperVenueUser(s), keysUser(s)}
	for _, x := range contract.Exchanges {
		users = append(users, connectorUser(s, x))
	}
	return users
}

// ConnectorUser names exchange x's connector user.
func ConnectorUser(x contract.Exchange) string { return "connector-" + string(x) }

func edgeUser(s contract.Subjects) ServiceUser {
	events := s.AccountEventStream()
	u := ServiceUser{
		Name: "edge",
		Why: "edge: HTTP front door. Routes operations to connectors, looks up API keys and credential " +
			"metadata, follows change events, reports usage and writes audit entries into the audit stream " +
			"(the stream's acknowledgement comes back to its inbox), and reads account events through its " +
			"own consumers of " + events + ". Never secrets.",
		Publish: []string{s.Prefix + ".exchange.>", s.KeyLookup(), s.CredentialLookup(), s.CredentialList(), s.Usage(), s.Audit(),
			"$JS.API.INFO", "$JS.API.STREAM.INFO." + events, "$JS.API.STREAM.CREATE." + events,
			"$JS.API.CONSUMER.CREATE." + events + ".>", "$JS.API.CONSUMER.DELETE." + events + ".>",
			"$JS.API.CONSUMER.INFO." + events + ".>", "$JS.API.CONSUMER.MSG.NEXT." + events + ".>",
			"$JS.API.STREAM.MSG.GET." + events, s.Prefix + ".feed.*.interest"},
	}
	u.Why += " It asks the connectors to keep the private feeds of credentials it streams events of open," +
		" and reads a credential's newest event when its consumer has gone quiet, to tell a stalled consumer from no events."
	u.Subscribe = []string{s.Events(), u.InboxPrefix() + ".>"}
	return u
}

// paperVenueUser: the paper exchange is a venue of its own, and like a
// venue's private websocket it publishes each account's raw events.
func paperVenueUser(s contract.Subjects) ServiceUser {
	u := ServiceUser{
		Name: "paper-venue",
		Why: "paper-venue: the paper exchange publishes each account's raw events on core NATS (" +
			s.PaperVenueRoot() + ".>), its private stream, which connector-paper follows.",
		Publish: []string{s.PaperVenueRoot() + ".>"},
	}
	u.Subscribe = []string{u.InboxPrefix() + ".>"}
	return u
}

func keysUser(s contract.Subjects) ServiceUser {
	stream := s.AuditStream()
	consumer := stream + "." + contract.AuditConsumer
	u := ServiceUser{
		Name: "keys",
		Why: "keys: serves its subjects (API key and credential look-ups, one secret endpoint per exchange), " +
			"publishes change events, stores usage reports, and creates and consumes the audit stream " + stream +
			" (JetStream API of that stream and its durable consumer only). It also calls the connectors " +
			"(" + s.Prefix + ".exchange.>): a key's kill switch cancels the orders and closes the positions " +
			"on the credentials the key may use.",
		Publish: []string{
			s.Events(), s.Prefix + ".exchange.>",
			"$JS.API.STREAM.CREATE." + stream, "$JS.API.STREAM.UPDATE." + stream, "$JS.API.STREAM.INFO." + stream,
			"$JS.API.CONSUMER.CREATE." + stream + ".>", "$JS.API.CONSUMER.INFO." + consumer,
			"$JS.API.CONSUMER.MSG.NEXT." + consumer, "$JS.ACK." + stream + ".>",
		},
		AllowResponses: true,
	}
	u.Subscribe = []string{s.KeysRoot() + ".>", s.Usage(), "$SRV.>", u.InboxPrefix() + ".>"}
	return u
}

func connectorUser(s contract.Subjects, x contract.Exchange) ServiceUser {
	leases := s.StreamLeases()
	stream := s.Prefix + ".stream." + string(x) + ".>"
	u := ServiceUser{
		Name: ConnectorUser(x),
		Why: "connector-<exchange>: receives its own exchange's operations, asks keys for its own exchange's " +
			"credential secrets, follows change events, and shares its exchange's market-data stream with its " +
			"replicas: the stream subjects, its own keys of the lease bucket (JetStream KV " + leases +
			") and that bucket's stream API.",
		Publish: []string{
			s.Secret(x), stream, "$KV." + leases + "." + string(x) + ".>",
			"$JS.API.INFO", "$JS.API.STREAM.INFO.KV_" + leases, "$JS.API.STREAM.CREATE.KV_" + leases,
			"$JS.API.STREAM.UPDATE.KV_" + leases, "$JS.API.DIRECT.GET.KV_" + leases + ".>",
		},
		AllowResponses: true,
	}
	u.Subscribe = []string{s.ExchangeRoot(x) + ".>", stream, s.Events(), "$SRV.>", u.InboxPrefix() + ".>"}
	u.Publish = append(u.Publish, deadManPublish(s, x)...)
	u.Why += " It keeps the dead man's switches the gateway emulates in the bucket " + s.DeadManSwitches() +
		": its own keys, that bucket's stream API and a watch (ordered consumer) on it."
	feeds := s.Prefix + ".feed." + string(x) + ".>"
	u.Publish = append(u.Publish, feeds)
	u.Publish = append(u.Publish, accountEventsPublish(s, x)...)
	u.Subscribe = append(u.Subscribe, feeds)
	u.Why += " It holds credentials' private feeds (interest and holder beats on " + feeds + ", a lease per credential in " +
		leases + "), publishes their events into " + s.AccountEventStream() + " and reads back what it published there."
	if x == contract.Paper {
		u.Subscribe = append(u.Subscribe, s.PaperVenueRoot()+".>")
		u.Why += " connector-paper follows the paper venue's private streams (" + s.PaperVenueRoot() + ".>)."
	}
	return u
}

// accountEventsPublish is what a connector needs of the account event
// stream: its own exchange's subjects, the stream's API, and consumers to
// read a credential's last published states.
func accountEventsPublish(s contract.Subjects, x contract.Exchange) []string {
	events := s.AccountEventStream()
	return []string{
		s.Prefix + ".account." + string(x) + ".>",
		"$JS.API.STREAM.CREATE." + events, "$JS.API.STREAM.UPDATE." + events, "$JS.API.STREAM.INFO." + events,
		"$JS.API.STREAM.MSG.GET." + events, "$JS.API.DIRECT.GET." + events + ".>",
		"$JS.API.CONSUMER.CREATE." + events + ".>", "$JS.API.CONSUMER.DELETE." + events + ".>",
		"$JS.API.CONSUMER.INFO." + events + ".>", "$JS.API.CONSUMER.MSG.NEXT." + events + ".>",
	}
}

// deadManPublish is what a connector needs of the dead man's switch bucket.
func deadManPublish(s contract.Subjects, x contract.Exchange) []string {
	b := s.DeadManSwitches()
	return []string{
		"$KV." + b + "." + string(x) + ".>",
		"$JS.API.STREAM.INFO.KV_" + b, "$JS.API.STREAM.CREATE.KV_" + b, "$JS.API.STREAM.UPDATE.KV_" + b,
		"$JS.API.DIRECT.GET.KV_" + b + ".>", "$JS.API.CONSUMER.CREATE.KV_" + b, "$JS.API.CONSUMER.CREATE.KV_" + b + ".>",
		"$JS.API.CONSUMER.DELETE.KV_" + b + ".>", "$JS.API.CONSUMER.INFO.KV_" + b + ".>",
	}
}
