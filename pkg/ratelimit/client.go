package ratelimit

import "github.com/redis/go-redis/v9"

// FailFast sets o so that a Redis refusing connections is reported in
// milliseconds. The limiter is on every request's path, and go-redis by
// default dials five times, 100 ms apart, on each of a command's four
// tries: 1.7 s before the edge could answer 503, too close to the
// deadlines clients and load balancers give up at. One dial per try keeps
// go-redis's command retries (with their short backoff), which ride out a
// dropped connection; a Redis that is down stays down for all of them.
func FailFast(o *redis.Options) *redis.Options {
	o.DialerRetries = 1
	return o
}
