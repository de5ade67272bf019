package paper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgArchive is the Postgres journal's order archive: the closed orders an
// account no longer holds in memory go to the table orders of the
// journal's schema, where look-ups by id and client order id find them,
// as the file journal's orderArchive does on disk.
//
// archive only queues an order, under the engine's lock; the journal's
// next commit stores some queued orders in the same transaction as its
// records (no commit of their own), and a snapshot stores all of them in
// its transaction, since it no longer holds them. Until stored, look-ups
// find them in the queue. Storing is safe to repeat (a replay archives
// the same orders again).
type pgArchive struct {
	db     *pgxpool.Pool
	orders string // the table

	qmu     sync.Mutex
	pending []archivedOrder // archived, not yet stored, oldest first
	newest  time.Time       // the latest close time archived
}

type archivedOrder struct {
	account string
	seq     uint64
	order   Order
}

// pgArchiveKeep is how long the table keeps an order after it closed, by
// the engine's clock: the 24 h of the idempotency promise, with room, as
// the file archive's two spans.
const pgArchiveKeep = 2 * archiveSpan

// pgArchiveLookup bounds a look-up, which runs under the engine's lock.
const pgArchiveLookup = 2 * time.Second

// pgArchiveBatch bounds the orders one statement stores: a replay may
// archive many at once, and a commit must stay within its attempt.
const pgArchiveBatch = 2000

func (a *pgArchive) ddl() string {
	return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %[1]s (account text NOT NULL, id text NOT NULL, client text NOT NULL,
  seq bigint NOT NULL, closed timestamptz NOT NULL, body text NOT NULL, PRIMARY KEY (account, id));
CREATE INDEX IF NOT EXISTS orders_by_client ON %[1]s (account, client, seq) WHERE client <> '';
CREATE INDEX IF NOT EXISTS orders_by_closed ON %[1]s (closed)`, a.orders)
}

func (a *pgArchive) archive(account string, o Order, seq uint64) error {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	a.pending = append(a.pending, archivedOrder{account: account, seq: seq, order: o})
	if o.UpdatedAt.After(a.newest) {
		a.newest = o.UpdatedAt
	}
	return nil
}

// queued returns up to max of the oldest orders not yet stored.
func (a *pgArchive) queued(max int) []archivedOrder {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	return slices.Clone(a.pending[:min(max, len(a.pending))])
}

// stored drops the n oldest orders from the queue, now in the table; one
// commit at a time stores them (the journal's committing lock).
func (a *pgArchive) stored(n int) {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	left := copy(a.pending, a.pending[n:])
	clear(a.pending[left:])
	a.pending = a.pending[:left]
}

// cutoff is the close time before which stored orders may go (zero when
// none was archived).
func (a *pgArchive) cutoff() time.Time {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	if a.newest.IsZero() {
		return time.Time{}
	}
	return a.newest.Add(-pgArchiveKeep)
}

// insertOrders returns the statement that inserts orders, keeping rows
// already there (the same orders: ids are not reused).
func (a *pgArchive) insertOrders(orders []archivedOrder) (string, []any, error) {
	cols := make([][]string, 4)
	seqs, closed := make([]int64, len(orders)), make([]time.Time, len(orders))
	for i, ao := range orders {
		body, err := json.Marshal(ao.order)
		if err != nil {
			return "", nil, err
		}
		for c, v := range []string{ao.account, ao.order.ID, ao.order.ClientOrderID, string(body)} {
			cols[c] = append(cols[c], v)
		}
		seqs[i], closed[i] = int64(ao.seq), ao.order.UpdatedAt
	}
	return `INSERT INTO ` + a.orders + ` (account, id, client, body, seq, closed)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::timestamptz[])
ON CONFLICT (account, id) DO NOTHING`, []any{cols[0], cols[1], cols[2], cols[3], seqs, closed}, nil
}

func (a *pgArchive) archivedByID(account, id string) (Order, bool, error) {
	match := func(ao *archivedOrder) bool { return ao.order.ID == id }
	if ao, ok := a.fromQueue(account, match); ok {
		return ao.order, true, nil // ids are unique: the table has no other
	}
	o, _, ok, err := a.fromTable(`SELECT body, seq FROM `+a.orders+` WHERE account = $1 AND id = $2`, account, id)
	return o, ok, err
}

func (a *pgArchive) archivedByClient(account, clientOrderID string) (Order, bool, error) {
	if clientOrderID == "" {
		return Order{}, false, nil
	}
	queued, inQueue := a.fromQueue(account, func(ao *archivedOrder) bool { return ao.order.ClientOrderID == clientOrderID })
	o, seq, ok, err := a.fromTable(`SELECT body, seq FROM `+a.orders+`
WHERE account = $1 AND client = $2 ORDER BY seq DESC LIMIT 1`, account, clientOrderID)
	if err != nil {
		return Order{}, false, err
	}
	if inQueue && (!ok || queued.seq > seq) { // the newest placed wins a client order id
		return queued.order, true, nil
	}
	return o, ok, nil
}

// fromQueue returns the newest placed of the account's queued orders
// that match.
func (a *pgArchive) fromQueue(account string, match func(*archivedOrder) bool) (archivedOrder, bool) {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	var found *archivedOrder
	for i := range a.pending {
		if ao := &a.pending[i]; ao.account == account && match(ao) && (found == nil || ao.seq > found.seq) {
			found = ao
		}
	}
	if found == nil {
		return archivedOrder{}, false
	}
	return *found, true
}

// fromTable returns the order query finds by account and key, and its
// placement sequence.
func (a *pgArchive) fromTable(query, account, key string) (Order, uint64, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgArchiveLookup)
	defer cancel()
	var body []byte
	var seq int64
	err := a.db.QueryRow(ctx, query, account, key).Scan(&body, &seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, 0, false, nil
	}
	var o Order
	if err == nil {
		err = json.Unmarshal(body, &o)
	}
	if err != nil {
		return Order{}, 0, false, fmt.Errorf("paper order archive: %w", err)
	}
	return o, uint64(seq), true, nil
}
