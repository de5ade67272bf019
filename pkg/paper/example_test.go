package paper_test

import (
	"fmt"
	"time"

	"github.com/perpgate/perpgate/pkg/paper"
	"github.com/shopspring/decimal"
)

func Example() {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	e := paper.New(paper.Config{Seed: 1, Now: func() time.Time { return now }})

	e.SetMarkPrice("BTC-USD-PERP", decimal.NewFromInt(60000))
	o, _ := e.PlaceOrder("alice", paper.OrderRequest{
		Market: "BTC-USD-PERP", Side: paper.Buy, Type: paper.Limit,
		Size: decimal.RequireFromString("0.1"), Price: decimal.NewFromInt(59500),
	})
	fmt.Println(o.Status)

	e.SetMarkPrice("BTC-USD-PERP", decimal.NewFromInt(59400))
	o, _ = e.Order("alice", o.ID)
	pos, _ := e.Positions("alice", "BTC-USD-PERP")
	b, _ := e.Balance("alice")
	fmt.Println(o.Status, o.Fee, pos[0].Side, pos[0].Size, pos[0].UnrealizedPnL, b.Wallet)
	// Output:
	// OPEN
	// FILLED 1.19 LONG 0.1 -10 9998.81
}
