package paper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgresJournal is a Journal in the paper venue's own schema of the
// deployment's Postgres, so that a restarted or rescheduled paper-venue
// comes back with every account, order and position. No other service
// reads the schema.
//
// Write only queues a record, under the engine's lock; Sync commits every
// queued record in one statement, after the lock, so concurrent calls
// share a commit and the engine never waits for Postgres while holding
// its lock. Each record is stored under its own position (seq), which
// makes a commit safe to repeat: when an answer is lost after Postgres
// committed, the retry finds the same rows and adds none. A record can
// thus never be committed twice, nor replayed without having been
// applied.
type PostgresJournal struct {
	pool           *pgxpool.Pool
	log            *slog.Logger
	insert, verify string

	// Attempt bounds one commit; Sync retries failed commits for Patience
	// before it gives up; a failed journal retries every RetryEvery.
	attempt, patience, retryEvery time.Duration
	store                         func(ctx context.Context, batch []queued) error // j.commitBatch; tests fail it

	committing sync.Mutex // one commit at a time, so batches land in order
	mu         sync.Mutex
	queue      []queued // written, not yet committed, in position order
	last       uint64   // position of the latest record written
	durable    uint64   // position of the latest record committed
	// err is set when a commit failed for good: the journal refuses new
	// records until a retry has committed every queued one, so that the
	// engine refuses changes rather than make ones it cannot keep.
	err      error
	retrying bool
	closed   chan struct{}
	close    sync.Once

	// Snapshots (compactor): the table of them, the one the
	// records start from until Snapshot hands it over, records written
	// since the last one, how many make the next due, and whether one is
	// being stored (snapshotting counts it).
	table, snapshots string
	snap             []byte
	since, every     int
	storing          bool
	snapshotting     sync.WaitGroup

	// Closed orders an account no longer holds in memory (archiver).
	pgArchive
}

type queued struct {
	seq    int64
	record string
}

// errForeignRows means the table holds other records at this journal's
// positions: something else writes to the schema.
var errForeignRows = errors.New("the journal table holds other records at these positions: is a second paper-venue using this schema?")

// Commit timings: one commit attempt, how long Sync keeps retrying, and
// how often a failed journal tries again.
const (
	commitAttempt  = 2 * time.Second
	commitPatience = 5 * time.Second
	commitRetry    = time.Second
)

// OpenPostgresJournal connects, creates the schema and table when missing
// and returns the journal with the records it holds, oldest first.
func OpenPostgresJournal(ctx context.Context, url, schema string, log *slog.Logger) (*PostgresJournal, [][]byte, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, nil, fmt.Errorf("paper journal: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	table := pgx.Identifier{schema}.Sanitize() + ".journal"
	j := &PostgresJournal{
		pool: pool, log: log, table: table,
		// A journal made by an earlier version has seq bigserial; the
		// explicit positions written here fit it as well.
		insert: `INSERT INTO ` + table + ` (seq, record)
SELECT s, r::jsonb FROM unnest($1::bigint[], $2::text[]) AS t(s, r) ON CONFLICT (seq) DO NOTHING`,
		verify: `SELECT count(*) FROM unnest($1::bigint[], $2::text[]) AS t(s, r)
JOIN ` + table + ` j ON j.seq = t.s AND j.record = t.r::jsonb`,
		attempt: commitAttempt, patience: commitPatience, retryEvery: commitRetry,
		closed: make(chan struct{}),
	}
	j.store = j.commitBatch
	j.snapshots, j.every = pgx.Identifier{schema}.Sanitize()+".snapshot", snapshotEvery
	j.pgArchive = pgArchive{db: pool, orders: pgx.Identifier{schema}.Sanitize() + ".orders"}
	ddl := fmt.Sprintf(`CREATE SCHEMA IF NOT EXISTS %s;
CREATE TABLE IF NOT EXISTS %s (seq bigint PRIMARY KEY, record jsonb NOT NULL);
CREATE TABLE IF NOT EXISTS %s (upto bigint PRIMARY KEY, taken timestamptz NOT NULL, seed bigint NOT NULL, state bytea NOT NULL);
%s`, pgx.Identifier{schema}.Sanitize(), table, j.snapshots, j.ddl())
	if _, err := pool.Exec(ctx, ddl); err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("paper journal: create schema %s: %w", schema, err)
	}
	records, err := j.read(ctx, table)
	if err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("paper journal: read: %w", err)
	}
	return j, records, nil
}

// read returns the records to replay: those after the latest snapshot,
// behind a start record naming it (Reopen then restores it), or
// every record when there is none.
func (j *PostgresJournal) read(ctx context.Context, table string) ([][]byte, error) {
	var upto, seed int64
	var taken time.Time
	err := j.pool.QueryRow(ctx, `SELECT upto, taken, seed, state FROM `+j.snapshots+` ORDER BY upto DESC LIMIT 1`).
		Scan(&upto, &taken, &seed, &j.snap)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	}
	var records [][]byte
	if j.snap != nil {
		start, err := json.Marshal(map[string]any{"op": "start", "t": taken, "seed": seed, "snap": upto})
		if err != nil {
			return nil, err
		}
		records = append(records, start)
	}
	rows, err := j.pool.Query(ctx, `SELECT seq, record::text FROM `+table+` WHERE seq > $1 ORDER BY seq`, upto)
	if err != nil {
		return nil, err
	}
	seq := upto
	var record string
	_, err = pgx.ForEachRow(rows, []any{&seq, &record}, func() error {
		records = append(records, []byte(record))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		// A new engine: its order ids start again, so the orders archived
		// by an earlier one must not answer for them.
		if _, err := j.pool.Exec(ctx, `DELETE FROM `+j.orders); err != nil {
			return nil, err
		}
	}
	j.last, j.durable = uint64(seq), uint64(seq) // positions go on after the highest stored
	j.since = len(records)
	return records, nil
}

// Snapshot returns the state the records start from, once (compactor).
func (j *PostgresJournal) Snapshot() []byte {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.snap
	j.snap = nil
	return s
}

// CompactDue reports whether a snapshot is due and none is being stored.
func (j *PostgresJournal) CompactDue() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return !j.storing && j.err == nil && j.since >= j.every
}

// Compact stores state, which reflects every record written so far, as
// the snapshot the journal starts from, and drops those records. The
// engine holds its lock, so the work goes on in the background: records
// up to the snapshot that commit after it are ignored on open and
// dropped by the next snapshot. The orders archived so far, which state
// no longer holds, are stored with it.
func (j *PostgresJournal) Compact(seed int64, state []byte) error {
	j.mu.Lock()
	upto, taken := int64(j.last), time.Now()
	j.storing, j.since = true, 0
	j.mu.Unlock()
	archived, cutoff := j.queued(math.MaxInt), j.cutoff()
	j.snapshotting.Add(1)
	go func() {
		defer j.snapshotting.Done()
		err := j.storeSnapshot(upto, taken, seed, state, archived, cutoff)
		j.mu.Lock()
		j.storing = false
		if err != nil {
			j.since += j.every / 2 // try again in a while, not on every change
		}
		j.mu.Unlock()
		if err != nil {
			j.log.Warn("paper journal snapshot not stored; the journal keeps every record", "err", err)
		}
	}()
	return nil
}

// storeSnapshot writes the snapshot and the orders archived before it,
// and drops what it replaces and the orders closed before cutoff, in one
// transaction.
func (j *PostgresJournal) storeSnapshot(upto int64, taken time.Time, seed int64, state []byte, archived []archivedOrder, cutoff time.Time) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return pgx.BeginFunc(ctx, j.pool, func(tx pgx.Tx) error {
		for chunk := range slices.Chunk(archived, pgArchiveBatch) {
			insert, args, err := j.insertOrders(chunk)
			if err == nil {
				_, err = tx.Exec(ctx, insert, args...)
			}
			if err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM `+j.orders+` WHERE closed < $1`, cutoff); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+j.snapshots+` (upto, taken, seed, state) VALUES ($1, $2, $3, $4)
ON CONFLICT (upto) DO UPDATE SET taken = excluded.taken, seed = excluded.seed, state = excluded.state`, upto, taken, seed, state); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM `+j.snapshots+` WHERE upto < $1`, upto); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM `+j.table+` WHERE seq <= $1`, upto)
		return err
	})
}

// Write implements Journal: it queues record for the next commit.
func (j *PostgresJournal) Write(record []byte) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return 0, j.err
	}
	j.since++
	j.last++
	j.queue = append(j.queue, queued{seq: int64(j.last), record: string(record)})
	return j.last, nil
}

// Sync implements Journal: it returns once the record at pos is
// committed, committing every queued record if no commit under way
// covers it.
func (j *PostgresJournal) Sync(pos uint64) error {
	j.committing.Lock()
	defer j.committing.Unlock()
	j.mu.Lock()
	if j.durable >= pos {
		j.mu.Unlock()
		return nil
	}
	if j.err != nil {
		err := j.err
		j.mu.Unlock()
		return err
	}
	batch := j.queue
	j.mu.Unlock()

	err := j.commitPatiently(batch)
	j.mu.Lock()
	defer j.mu.Unlock()
	if err != nil {
		j.err = fmt.Errorf("paper journal: records %d to %d not committed: %w", batch[0].seq, batch[len(batch)-1].seq, err)
		j.log.Error("paper journal cannot commit; the paper venue refuses changes until it can", "err", err)
		if !j.retrying && !errors.Is(err, errForeignRows) {
			j.retrying = true
			go j.retry()
		}
		return j.err
	}
	j.committed(len(batch))
	return nil
}

// committed drops the first n queued records, now in the table; callers
// hold j.mu and j.committing.
func (j *PostgresJournal) committed(n int) {
	if n == 0 {
		return
	}
	j.durable = uint64(j.queue[n-1].seq)
	left := copy(j.queue, j.queue[n:])
	clear(j.queue[left:])
	j.queue = j.queue[:left]
}

// commitPatiently commits batch, trying again on failure until the
// patience runs out.
func (j *PostgresJournal) commitPatiently(batch []queued) error {
	giveUp := time.Now().Add(j.patience)
	for wait := 20 * time.Millisecond; ; wait = min(2*wait, 500*time.Millisecond) {
		err := j.commitOnce(batch)
		if err == nil || errors.Is(err, errForeignRows) || time.Now().Add(wait).After(giveUp) {
			return err
		}
		select {
		case <-time.After(wait):
		case <-j.closed:
			return err
		}
	}
}

func (j *PostgresJournal) commitOnce(batch []queued) error {
	ctx, cancel := context.WithTimeout(context.Background(), j.attempt)
	defer cancel()
	return j.store(ctx, batch)
}

// commitBatch stores batch in one statement, and in the same transaction
// the oldest archived orders queued. Rows already there must be these
// very records: an earlier attempt committed them and its answer was
// lost.
func (j *PostgresJournal) commitBatch(ctx context.Context, batch []queued) error {
	seqs := make([]int64, len(batch))
	records := make([]string, len(batch))
	for i, q := range batch {
		seqs[i], records[i] = q.seq, q.record
	}
	statements := &pgx.Batch{} // one implicit transaction, one round trip
	archived := j.queued(pgArchiveBatch)
	if len(archived) > 0 {
		insert, args, err := j.insertOrders(archived)
		if err != nil {
			return err
		}
		statements.Queue(insert, args...)
	}
	statements.Queue(j.insert, seqs, records)
	results := j.pool.SendBatch(ctx, statements)
	var tag pgconn.CommandTag
	var err error
	for range statements.Len() {
		if tag, err = results.Exec(); err != nil {
			break
		}
	}
	if cerr := results.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	j.stored(len(archived))
	if tag.RowsAffected() == int64(len(batch)) {
		return nil
	}
	var same int64
	if err := j.pool.QueryRow(ctx, j.verify, seqs, records).Scan(&same); err != nil {
		return err
	}
	if same != int64(len(batch)) {
		return errForeignRows
	}
	return nil
}

// retry commits the queued records of a failed journal until it can, and
// then lets it take records again.
func (j *PostgresJournal) retry() {
	for {
		select {
		case <-time.After(j.retryEvery):
		case <-j.closed:
			return
		}
		j.committing.Lock()
		j.mu.Lock()
		batch := j.queue // the journal takes no records while failed
		j.mu.Unlock()
		err := j.commitOnce(batch)
		if err == nil {
			j.mu.Lock()
			j.committed(len(batch))
			j.err, j.retrying = nil, false
			j.mu.Unlock()
			j.committing.Unlock()
			j.log.Info("paper journal commits again; the paper venue takes changes", "records", len(batch))
			return
		}
		j.committing.Unlock()
		if errors.Is(err, errForeignRows) {
			j.log.Error("paper journal stays failed", "err", err)
			return
		}
	}
}

// Ping reports whether the journal can take changes, for readiness.
func (j *PostgresJournal) Ping(ctx context.Context) error {
	j.mu.Lock()
	err := j.err
	j.mu.Unlock()
	if err != nil {
		return err
	}
	return j.pool.Ping(ctx)
}

// Close stops retrying and closes the pool; records not yet committed
// stay uncommitted.
func (j *PostgresJournal) Close() {
	j.close.Do(func() {
		close(j.closed)
		j.snapshotting.Wait()
		j.pool.Close()
	})
}
