// Package paper is perpgate's simulated perpetual-futures exchange: the
// engine behind the built-in "paper" exchange (DESIGN §8) and underneath the
// wire-level simulators of the real venues.
//
// An Engine holds markets and accounts in memory. It knows nothing of any
// wire format: the paper venue service (services/connectors/paper/venue)
// serves it over HTTP, and exchange simulators translate their own APIs onto
// it. Everything is deterministic given Config.Seed and the injected clock.
//
// # Prices
//
// Each market's mark price follows a seeded random walk of one step per
// second of the injected clock. The walk is advanced lazily: every call first
// replays the steps elapsed since the previous call, so a fake clock makes
// every price, fill and funding payment reproducible. After each step (and
// after SetMarkPrice) resting orders and stop triggers are checked. The order
// book is synthesized around mark: bids at mark−k·tick, asks at mark+k·tick
// (k = 1, 2, ...), with deterministic sizes. Orders of paper accounts never
// appear in it.
//
// # Fill rules
//
//   - MARKET orders walk the synthesized book and pay the taker fee; one
//     Fill per book level.
//   - A LIMIT order that crosses the book when placed (BUY at or above the
//     best ask, SELL at or below the best bid) takes liquidity up to its
//     price at the taker fee; any rest rests. PostOnly orders that would
//     cross are rejected with ErrPostOnlyWouldCross.
//   - A resting LIMIT order fills completely at its own price, with the maker
//     fee, once mark crosses it: a BUY when mark <= price, a SELL when
//     mark >= price.
//   - STOP_MARKET orders stay PENDING until mark reaches the trigger (SELL:
//     mark <= trigger, BUY: mark >= trigger); TAKE_PROFIT_MARKET orders
//     trigger the other way (SELL: mark >= trigger, BUY: mark <= trigger).
//     A triggered order executes as a market order; if that fails it ends
//     REJECTED (or CANCELLED when reduce-only finds nothing to reduce).
//
// # Reduce-only
//
// A reduce-only order is rejected with ErrReduceOnly when the position is
// flat or on the order's side. When it is larger than the position it is
// capped to the position size (the returned Order shows the capped size).
// The same rule is applied again when a resting or triggered reduce-only
// order fills: it is cancelled or capped, never allowed to grow or flip.
//
// # Margin and PnL
//
// Cross margin. Initial margin of a position is |size|·mark/leverage; an
// open limit order reserves the part of it that would open exposure, times
// its price over leverage. Equity (= account value) is wallet balance plus
// unrealized PnL; free collateral is equity minus position margin minus
// order margin. Realized PnL, fees and funding are booked into the wallet as
// they happen. There are no liquidations.
//
// # Funding
//
// At every multiple of Config.FundingInterval since the Unix epoch (UTC),
// each position pays size·mark·rate (longs pay a positive rate, shorts
// receive it). The rate is 0.01% plus the mark/index premium, clamped to
// ±0.75%.
//
// # Durability
//
// With a Journal (Reopen), every call that changes state is recorded
// before the change is applied, and the call returns only once its record
// is durable. Concurrent calls share fsyncs (group commit): records reach
// the journal in the order the changes were made and an fsync covers a
// prefix of them, so a crash loses at most the latest changes, never one
// a surviving change depended on. A call whose record cannot be written
// fails with ErrJournal and changes nothing; one whose record cannot be
// made durable fails with ErrJournal too (the change stays made in
// memory), and the journal then refuses every later change: the engine
// fails closed. The file journal stays so until the process restarts; the
// paper venue's Postgres journal takes changes again once a retry has
// committed every record it held. A read that runs while a
// change's fsync is in flight may show that change; only a machine crash
// (not a process crash: the record is already written) in that window
// could then take it back.
//
// A journal that keeps snapshots (FileJournal) is handed the engine's
// whole state now and then, under the engine's lock, and starts afresh
// from it: Reopen restores the snapshot and replays only the records
// written since.
package paper
