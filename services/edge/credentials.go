package edge

import (
	"context"

	"github.com/perpgate/perpgate/pkg/bus"
	"github.com/perpgate/perpgate/pkg/contract"
)

// getCredentials (DESIGN §13) lists the credentials the key may use, from
// the keys service's credential metadata; secrets never leave the keys
// service. Not cached: a credential created a moment ago must show.
func (s *Server) getCredentials(ctx context.Context, key contract.KeyInfo) (contract.CredentialsResult, *contract.Error) {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	var all []contract.CredentialInfo
	err := bus.Request(ctx, s.nc, s.subjects.CredentialList(), nil, contract.CredentialListRequest{AccountID: key.AccountID}, &all)
	if err != nil {
		return contract.CredentialsResult{}, s.lookupFailed(ctx, "credentials cannot be listed", err)
	}
	out := contract.CredentialsResult{Credentials: []contract.CredentialEntry{}}
	for _, c := range all {
		if key.MayUse(c) {
			out.Credentials = append(out.Credentials, contract.CredentialEntry{
				CredentialID: c.ID, Exchange: c.Exchange, Env: c.Environment, Label: c.Label})
		}
	}
	return out, nil
}
