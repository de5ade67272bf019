package fault

import (
	"fmt"
	"strings"
)

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
