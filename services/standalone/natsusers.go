package standalone

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
	"github.com/perpgate/perpgate/services/edge"
)

// The embedded NATS server, when PERPGATE_NATS_LISTEN opens it to other
// processes, accepts only the services' users (bus.ServiceUsers, the table
// deploy/nats.conf is generated from), each held to its permissions. The
// services in this process log in as those users too, so they run under
// the same permissions as in a deployment: a subject missing from the table
// fails here as it would there, and no in-process connection is a
// privileged way around it.

// natsUsersFile holds the generated passwords, by user, in the data dir.
const natsUsersFile = "nats-users.json"

// loadNATSPasswords reads each service user's password from its setting
// (NATS_EDGE_PASSWORD, … as deploy/nats.conf names them).
func loadNATSPasswords(lookup func(string) (string, bool)) map[string]bus.Password {
	pw := map[string]bus.Password{}
	for _, u := range bus.ServiceUsers(contract.NewSubjects("")) {
		if v, ok := lookup(u.PasswordVar()); ok && v != "" {
			pw[u.Name] = bus.Password(v)
		}
	}
	return pw
}

// validateNATSListen refuses to open the embedded server beyond this host
// with passwords that were not chosen for it: on another host, clients can
// only have them from the settings.
func (c Config) validateNATSListen() error {
	if c.NATSListen == "" || c.NATSURL != "" {
		return nil
	}
	host, _, err := net.SplitHostPort(c.NATSListen)
	if err != nil {
		return fmt.Errorf("PERPGATE_NATS_LISTEN: %q is not host:port such as 127.0.0.1:4222", c.NATSListen)
	}
	if edge.IsLoopbackHost(host) {
		return nil
	}
	var missing []string
	for _, u := range bus.ServiceUsers(contract.NewSubjects("")) {
		if c.NATSPasswords[u.Name] == "" {
			missing = append(missing, u.PasswordVar())
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("PERPGATE_NATS_LISTEN=%s opens the embedded NATS beyond this host: set the password of every "+
		"NATS user (missing: %s), or listen on 127.0.0.1", c.NATSListen, strings.Join(missing, ", "))
}

// natsLogins are the users of the listening embedded server: each with the
// password from its setting, else the one generated earlier and kept in
// the data dir, else a new one kept there (0600) for outside services.
func natsLogins(cfg Config) ([]bus.Login, error) {
	path := filepath.Join(cfg.DataDir, natsUsersFile)
	kept := map[string]string{}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &kept); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var logins []bus.Login
	generated := false
	for _, u := range bus.ServiceUsers(contract.NewSubjects(cfg.Edge.SubjectPrefix)) {
		pw := cfg.NATSPasswords[u.Name]
		if pw == "" {
			if kept[u.Name] == "" {
				kept[u.Name], generated = randomBase64(24), true
			}
			pw = bus.Password(kept[u.Name])
		}
		logins = append(logins, bus.Login{User: u, Password: pw})
	}
	if generated {
		if err := writePrivate(path, kept); err != nil {
			return nil, err
		}
	}
	return logins, nil
}

// writePrivate writes v as JSON to path, readable by its owner only.
func writePrivate(path string, v any) error {
	data, _ := json.MarshalIndent(v, "", "  ")
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// WriteFile keeps the mode of a file that was there.
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
