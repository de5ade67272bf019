package connector

import (
	"encoding/json"
	"testing"
)

func TestLenientDecoding(t *testing.T) {
	var v struct {
		A, B, C, D Decimal
		I, J, K    Int
		S, T       Text
	}
	in := `{"A":"1.25","B":1.25,"C":"","D":null,"I":"1735689600000","J":1735689600000,"K":"","S":"18446744073709551615","T":18446744073709551615}`
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	if v.A.String() != "1.25" || v.B.String() != "1.25" || !v.A.Given || !v.B.Given || v.C.Given || v.D.Given || !v.C.IsZero() {
		t.Errorf("decimals %+v %+v %+v %+v", v.A, v.B, v.C, v.D)
	}
	if v.I != 1735689600000 || v.J != 1735689600000 || v.K != 0 {
		t.Errorf("ints %d %d %d", v.I, v.J, v.K)
	}
	if v.S != "18446744073709551615" || v.T != "18446744073709551615" {
		t.Errorf("texts %q %q", v.S, v.T)
	}
	for _, bad := range []string{`{"A":"x"}`, `{"A":true}`, `{"I":"1.5"}`, `{"S":{}}`} {
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("%s decoded without an error", bad)
		}
	}
}

func FuzzLenientDecimal(f *testing.F) {
	for _, s := range []string{`"1.5"`, `2`, `""`, `null`, `"-0.0001"`, `1e3`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var d Decimal
		if err := json.Unmarshal([]byte(s), &d); err == nil && !d.Given && !d.IsZero() {
			t.Errorf("%s: a value not given must be zero, got %s", s, d)
		}
	})
}
