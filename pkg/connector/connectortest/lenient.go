package connectortest

import (
	"reflect"
	"testing"

	"github.com/perpgate/perpgate/pkg/contract"
)

// SameFill decodes one fill as a venue sent it twice, its ids, times and
// figures once as JSON strings and once as numbers, and requires the same
// contract fill from both (issue 28: one answer's string is another's
// number, and neither may break a read).
func SameFill(t *testing.T, decode func([]byte) (contract.Fill, error), asStrings, asNumbers string) {
	t.Helper()
	a, err := decode([]byte(asStrings))
	if err != nil {
		t.Fatalf("fill with strings: %v", err)
	}
	b, err := decode([]byte(asNumbers))
	if err != nil {
		t.Fatalf("fill with numbers: %v", err)
	}
	if !reflect.DeepEqual(a, b) || a.ID == "" || !a.Size.IsPositive() || a.Timestamp == 0 {
		t.Fatalf("the same fill read differently:\n strings %+v\n numbers %+v", a, b)
	}
}
