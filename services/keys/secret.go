package keys

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	"github.com/perpgate/perpgate/pkg/contract"
)

// secretField is one field of an exchange's credential secret.
type secretField struct {
	name     string
	required bool
	number   bool                // a JSON number is accepted besides a string
	boolean  bool                // a JSON true or false, kept as one
	pattern  *regexp.Regexp      // nil: any non-empty string
	rule     string              // what pattern demands, for the error message
	check    func(string) string // further validation: a problem text, "" when fine
}

var (
	reAddress20   = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
	rePrivKey32   = regexp.MustCompile(`^(0x)?[0-9a-fA-F]{64}$`)
	reHex         = regexp.MustCompile(`^0x[0-9a-fA-F]{1,64}$`)
	rePositiveDec = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
)

// maxSecretValue bounds one secret field, far above any real exchange secret.
const maxSecretValue = 4096

// secretShapes are the secret fields of each exchange (DESIGN §5).
var secretShapes = map[contract.Exchange][]secretField{
	contract.Binance: {
		{name: "apiKey", required: true},
		{name: "apiSecret", required: true},
	},
	contract.Bybit: {
		{name: "apiKey", required: true},
		{name: "apiSecret", required: true},
		// demo: a key made under the mainnet site's Demo Trading, served by
		// Bybit's demo host (testnet credentials only).
		{name: "demo", boolean: true},
	},
	contract.OKX: {
		{name: "apiKey", required: true},
		{name: "apiSecret", required: true},
		{name: "passphrase", required: true},
	},
	contract.Hyperliquid: {
		{name: "accountAddress", required: true, pattern: reAddress20, rule: "0x followed by 40 hex characters", check: checkEVMAddress},
		{name: "agentPrivateKey", required: true, pattern: rePrivKey32, rule: "64 hex characters, optionally prefixed by 0x", check: checkSecp256k1Key},
		{name: "vaultAddress", pattern: reAddress20, rule: "0x followed by 40 hex characters", check: checkEVMAddress},
	},
	contract.Paradex: {
		{name: "accountAddress", required: true, pattern: reHex, rule: "0x followed by 1 to 64 hex characters", check: checkFelt},
		{name: "starkPrivateKey", required: true, pattern: reHex, rule: "0x followed by 1 to 64 hex characters", check: checkStarkKey},
	},
	// Aster: the main wallet's address and the approved API wallet's key;
	// the signer address is derived from the key.
	contract.Aster: {
		{name: "userAddress", required: true, pattern: reAddress20, rule: "0x followed by 40 hex characters", check: checkEVMAddress},
		{name: "signerPrivateKey", required: true, pattern: rePrivKey32, rule: "64 hex characters, optionally prefixed by 0x", check: checkSecp256k1Key},
	},
	contract.Paper: {
		{name: "startingBalance", number: true, pattern: rePositiveDec, rule: "a positive decimal such as \"10000\""},
	},
}

// validateSecret checks a credential secret against its exchange's shape
// and returns it re-encoded compactly. Its errors are INVALID_REQUEST and
// name the offending field, never a value: the message may reach logs and
// the client, and the value may be a secret.
func validateSecret(x contract.Exchange, raw json.RawMessage) ([]byte, *contract.Error) {
	shape, ok := secretShapes[x]
	if !ok {
		return nil, contract.Errorf(contract.CodeInvalidRequest, "exchange %q is not supported", x)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{}`)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, contract.Errorf(contract.CodeInvalidRequest, "secret must be a JSON object with the fields %s", fieldList(shape))
	}
	known := map[string]secretField{}
	for _, f := range shape {
		known[f.name] = f
	}
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := known[n]; !ok {
			return nil, contract.Errorf(contract.CodeInvalidRequest, "secret field %s is not accepted for %s; expected %s", fieldName(n), x, fieldList(shape))
		}
	}
	out := make(map[string]json.RawMessage, len(fields))
	for _, f := range shape {
		v, ok := fields[f.name]
		if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			if f.required {
				return nil, contract.Errorf(contract.CodeInvalidRequest, "secret field %q is required for %s", f.name, x)
			}
			continue
		}
		if f.boolean {
			var b bool
			if err := json.Unmarshal(v, &b); err != nil {
				return nil, contract.Errorf(contract.CodeInvalidRequest, "secret field %q for %s must be true or false", f.name, x)
			}
			out[f.name], _ = json.Marshal(b)
			continue
		}
		s, problem := secretValue(f, v)
		if problem != "" {
			return nil, contract.Errorf(contract.CodeInvalidRequest, "secret field %q for %s %s", f.name, x, problem)
		}
		enc, _ := json.Marshal(s)
		out[f.name] = enc
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, contract.Errorf(contract.CodeInvalidRequest, "secret for %s could not be encoded", x)
	}
	return b, nil
}

// secretValue returns the string value of one field, or a problem that
// completes the message "secret field X for Y ...".
func secretValue(f secretField, v json.RawMessage) (value, problem string) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		if !f.number {
			return "", "must be a string"
		}
		var n json.Number
		if err := json.Unmarshal(v, &n); err != nil {
			return "", "must be a string or a number"
		}
		s = n.String()
	}
	switch {
	case s == "":
		return "", "must not be empty"
	case len(s) > maxSecretValue:
		return "", "is too long"
	case strings.TrimSpace(s) != s:
		return "", "must not start or end with whitespace"
	case f.pattern != nil && !f.pattern.MatchString(s):
		return "", "must be " + f.rule
	case f.pattern == rePositiveDec && strings.Trim(strings.ReplaceAll(s, ".", ""), "0") == "":
		return "", "must be " + f.rule
	}
	if f.check != nil {
		if problem := f.check(s); problem != "" {
			return "", problem
		}
	}
	return s, ""
}

// fieldList describes a shape for messages: `"apiKey", "apiSecret"`.
func fieldList(shape []secretField) string {
	parts := make([]string, 0, len(shape))
	for _, f := range shape {
		p := `"` + f.name + `"`
		if !f.required {
			p += " (optional)"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// fieldName quotes a client-supplied field name for a message. Names are
// not values, but a confused client may paste a secret where a name goes
// (a private key as the key of an object), so only short identifier-like
// names are shown.
func fieldName(n string) string {
	if reFieldName.MatchString(n) {
		return `"` + n + `"`
	}
	return "(name not shown: not a short identifier)"
}

var reFieldName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,23}$`)
