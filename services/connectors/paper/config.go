package paper

import (
	"errors"
	"net/url"
	"time"
)

// Config holds the paper connector's own settings.
type Config struct {
	VenueURL string        // PERPGATE_PAPER_VENUE_URL
	Timeout  time.Duration // per venue call
	// UnlinkedProtection (PERPGATE_PAPER_LINKED_PROTECTION=off) places
	// protection legs the venue does not tie to their position, so the
	// gateway's protection watcher cancels the rest of a pair, as on
	// venues without linked TP/SL (tests of the watcher use it).
	UnlinkedProtection bool
}

// LoadConfig reads the paper connector settings through lookup.
func LoadConfig(lookup func(string) (string, bool)) (Config, error) {
	c := Config{VenueURL: "http://127.0.0.1:8090", Timeout: 10 * time.Second}
	if v, ok := lookup("PERPGATE_PAPER_VENUE_URL"); ok && v != "" {
		c.VenueURL = v
	}
	switch v, _ := lookup("PERPGATE_PAPER_LINKED_PROTECTION"); v {
	case "", "on":
	case "off":
		c.UnlinkedProtection = true
	default:
		return c, errors.Join(c.Validate(), errors.New("PERPGATE_PAPER_LINKED_PROTECTION must be on or off"))
	}
	return c, c.Validate()
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	if u, err := url.Parse(c.VenueURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("PERPGATE_PAPER_VENUE_URL must be an http(s) URL such as http://127.0.0.1:8090")
	}
	return nil
}
