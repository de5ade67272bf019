package keys

import (
	"slices"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
)

// TestSecretFieldsMatchShapes: the secret fields the CLI's help lists
// (contract.SecretFields) are the fields validation accepts, for every
// exchange.
func TestSecretFieldsMatchShapes(t *testing.T) {
	for _, x := range contract.Exchanges {
		var want []string
		for _, f := range secretShapes[x] {
			if f.required {
				want = append(want, f.name)
			}
		}
		for _, f := range secretShapes[x] {
			if !f.required {
				want = append(want, f.name+"?")
			}
		}
		if got := contract.SecretFields[x]; !slices.Equal(got, want) {
			t.Errorf("%s: contract.SecretFields %v, validation %v", x, got, want)
		}
	}
}
