package venuekit

import (
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/shopspring/decimal"
)

func TestAfterPages(t *testing.T) {
	var asked []string
	rows := []int{1, 2, 3, 4, 5}
	got, err := AfterPages(2, func(after string) ([]int, error) {
		asked = append(asked, after)
		from := 0
		if after != "" {
			from, _ = strconv.Atoi(after)
		}
		return rows[from:min(from+2, len(rows))], nil
	}, strconv.Itoa)
	if err != nil || !reflect.DeepEqual(got, rows) || !reflect.DeepEqual(asked, []string{"", "2", "4"}) {
		t.Fatalf("got %v %v, asked %q", got, err, asked)
	}
	if _, err := AfterPages(2, func(string) ([]int, error) { return nil, errors.New("down") }, strconv.Itoa); err == nil {
		t.Fatal("a failed page is no error")
	}
}

func TestIfPositive(t *testing.T) {
	if IfPositive(decimal.Zero) != nil || IfPositive(decimal.NewFromInt(-1)) != nil {
		t.Fatal("zero or negative is not nil")
	}
	if p := IfPositive(decimal.NewFromInt(3)); p == nil || !p.Equal(decimal.NewFromInt(3)) {
		t.Fatalf("3 is %v", p)
	}
}
