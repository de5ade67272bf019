package edge

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/perpgate/perpgate/pkg/contract"
)

// target is step 7 for every operation: the credential, or for an
// operation that may go without one (getCapabilities) the exchange named
// instead, checked against the key's allowedExchanges. The request then
// goes to that exchange's connectors with no credential id.
func (s *Server) target(ctx context.Context, key contract.KeyInfo, op *contract.Operation, fields map[string]json.RawMessage) (contract.CredentialInfo, *contract.Error) {
	if op.Keyless {
		if _, ok := fields["credentialId"]; ok {
			return contract.CredentialInfo{}, contract.Errorf(contract.CodeInvalidRequest,
				"%s takes no field \"credentialId\": it lists the credentials of the API key", op.Name)
		}
		return contract.CredentialInfo{ID: contract.NoCredential, AccountID: key.AccountID}, nil
	}
	if !op.ByExchange {
		return s.credential(ctx, key, fields)
	}
	present := func(name string) bool {
		raw, ok := fields[name]
		return ok && strings.TrimSpace(string(raw)) != "null"
	}
	switch {
	case present("credentialId") && present("exchange"):
		return contract.CredentialInfo{}, contract.Errorf(contract.CodeInvalidRequest,
			"give field \"credentialId\" or field \"exchange\" to %s, not both", op.Name)
	case present("credentialId"):
		return s.credential(ctx, key, fields)
	case !present("exchange"):
		return contract.CredentialInfo{}, contract.Errorf(contract.CodeInvalidRequest,
			"field \"credentialId\" or field \"exchange\" is required: %s describes the credential's exchange or the one named", op.Name)
	}
	name, _ := contract.JSONString(fields["exchange"])
	x := contract.Exchange(name)
	if !x.Valid() {
		names := make([]string, len(contract.Exchanges))
		for i, e := range contract.Exchanges {
			names[i] = string(e)
		}
		return contract.CredentialInfo{}, contract.Errorf(contract.CodeInvalidRequest,
			"field \"exchange\" must be one of %s", strings.Join(names, ", "))
	}
	if len(key.AllowedExchanges) > 0 && !slices.Contains(key.AllowedExchanges, x) {
		return contract.CredentialInfo{Exchange: x}, contract.Errorf(contract.CodeExchangeNotAllowed, "this API key may not use exchange %s", x)
	}
	return contract.CredentialInfo{ID: contract.NoCredential, AccountID: key.AccountID, Exchange: x}, nil
}
