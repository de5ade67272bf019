package contract

// Subjects of the account feeds (DESIGN §13): who wants a credential's
// private feed open, and the holder's word that it is.

// AccountFeedInterest is where anyone who wants exchange x's account feed
// of a credential open says so ({"credentialId"}, repeated while it does);
// a request there is answered once the feed is open and reconciled.
func (s Subjects) AccountFeedInterest(x Exchange) string {
	return s.Prefix + ".feed." + string(x) + ".interest"
}

// AccountFeedState is where the replica holding a credential's account feed
// says, every beat, that it holds it and whether it is healthy.
func (s Subjects) AccountFeedState(x Exchange) string {
	return s.Prefix + ".feed." + string(x) + ".state"
}

// PaperVenueAccount is the paper venue's private stream of one account:
// its engine's raw events, in order, on core NATS.
func (s Subjects) PaperVenueAccount(account string) string {
	return s.PaperVenueRoot() + ".acct." + account
}

// PaperVenueHello is where a starting paper venue says so: a follower's
// feed reconnects (and reconciles) then.
func (s Subjects) PaperVenueHello() string { return s.PaperVenueRoot() + ".hello" }

// PaperVenueRoot roots the paper venue's private streams.
func (s Subjects) PaperVenueRoot() string { return s.Prefix + ".venue.paper" }
