package connector

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// CheckBaseURL reports a venue REST base that is not an http(s) URL,
// naming the setting that carries it and a good example.
func CheckBaseURL(setting, what, value, example string) error {
	p, err := url.Parse(value)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("%s: the %s %q must be an http(s) URL such as %s", setting, what, value, example)
	}
	return nil
}

// Millis reads a setting given in whole milliseconds.
func Millis(setting, value string) (time.Duration, error) {
	n, err := strconv.Atoi(value)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number of milliseconds", setting, value)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// CheckRecvWindow reports a receive window outside 1 ms to 60 s, the range
// the CEX venues accept for how long a signed request stays valid.
func CheckRecvWindow(setting string, d time.Duration) error {
	if d < time.Millisecond || d > time.Minute {
		return errors.New(setting + " must be 1 to 60000 milliseconds")
	}
	return nil
}
