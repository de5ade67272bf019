package deploy

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
)

// natsConfHead is what nats.conf says before its users.
const natsConfHead = `# NATS server configuration for a perpgate deployment (docker-compose.yml,
# k8s/): one user per service, each allowed only the subjects that service
# uses (DESIGN §1, §5). GENERATED from bus.ServiceUsers (pkg/bus/permissions.go)
# by "make nats-conf": edit that table, not this file. The embedded NATS of
# "perpgate serve" takes its users from the same table when it listens.
# Subjects are those of pkg/contract/subjects.go under the default prefix
# "perpgate"; a deployment that sets PERPGATE_SUBJECT_PREFIX must edit
# them here too.
#
# Passwords come from the server's environment ($NAME below); the server
# refuses to start while one is unset. Each service connects with
# PERPGATE_NATS_USER and PERPGATE_NATS_PASSWORD, and receives its replies
# under its own inbox prefix, PERPGATE_NATS_INBOX_PREFIX (default
# "_INBOX_" + user). A user may subscribe to its own inbox only, so no
# service can read the replies sent to another: above all, the credential
# secrets the keys service returns to a connector.
#
# Micro services (keys and the connectors) answer discovery on "$SRV.>"
# and reply to requests through allow_responses, which lets them publish
# to the reply subject of a request they received, once, and nothing else.

port: 4222
max_payload: 8MB

# JetStream is on; where it keeps its files is the server's -sd flag
# (compose: /data), since nats-server refuses a store_dir given twice.
jetstream: enabled
`

// NATSConf renders deploy/nats.conf from bus.ServiceUsers under the
// default subject prefix.
func NATSConf() []byte {
	var b bytes.Buffer
	b.WriteString(natsConfHead)
	b.WriteString("\nauthorization {\n  users: [\n")
	var lastWhy string
	for _, u := range bus.ServiceUsers(contract.NewSubjects("")) {
		if u.Why != lastWhy {
			b.WriteString("\n")
			for _, line := range wrap(u.Why, 72) {
				fmt.Fprintf(&b, "    # %s\n", line)
			}
			lastWhy = u.Why
		}
		fmt.Fprintf(&b, "    {\n      user: %s\n      password: $%s\n      permissions: {\n", u.Name, u.PasswordVar())
		writeAllow(&b, "publish", u.Publish)
		writeAllow(&b, "subscribe", u.Subscribe)
		if u.AllowResponses {
			b.WriteString("        allow_responses: true\n")
		}
		b.WriteString("      }\n    }\n")
	}
	b.WriteString("  ]\n}\n")
	return b.Bytes()
}

func writeAllow(b *bytes.Buffer, what string, subjects []string) {
	fmt.Fprintf(b, "        %s: { allow: [\n", what)
	for i, s := range subjects {
		sep := ","
		if i == len(subjects)-1 {
			sep = ""
		}
		fmt.Fprintf(b, "          %q%s\n", s, sep)
	}
	b.WriteString("        ] }\n")
}

// wrap breaks text into lines of at most width characters at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}
