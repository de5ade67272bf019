package ratelimit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/perpgate/perpgate/pkg/ratelimit"
)

func ExampleMemory() {
	now := time.Date(2025, 3, 9, 23, 59, 45, 0, time.UTC)
	l := ratelimit.NewMemory(func() time.Time { return now })
	free := ratelimit.Limits{PerMinute: 2, PerDay: 5000}
	for range 3 {
		d, err := l.Allow(context.Background(), "key-id", free)
		if err != nil {
			panic(err)
		}
		fmt.Printf("allowed=%v minute=%d/%d day=%d/%d retry=%v\n",
			d.Allowed, d.RemainingMinute, d.LimitMinute, d.RemainingDay, d.LimitDay, d.RetryAfter)
	}
	// Output:
	// allowed=true minute=1/2 day=4999/5000 retry=0s
	// allowed=true minute=0/2 day=4998/5000 retry=0s
	// allowed=false minute=0/2 day=4998/5000 retry=15s
}
