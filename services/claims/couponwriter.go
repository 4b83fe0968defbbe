package claims

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/couponsvc/couponsvc/services/core"
	"github.com/couponsvc/couponsvc/services/events"

	"github.com/couponsvc/couponsvc/models"

	"gorm.io/gorm"
)

// couponWriter writes the coupon rows of concurrent claims in batches: one
// multi-row INSERT, so one commit, for every claim that arrived while the
// previous batch was being written. Under a flash sale this turns thousands of
// commits a second into tens; alone, a claim is written at once, unbatched.
// Each caller is answered only after its own row is committed (or refused).
type couponWriter struct {
	db       *gorm.DB
	timeout  time.Duration
	maxBatch int
	queue    chan *couponWrite
	newCode  func() string
	observe  func(batch int)
	// emit writes the events of the rows, inside the transaction that
	// inserts them (docs/events.md).
	emit func(tx *gorm.DB, rows []*couponWrite) error
	// rereadIDs reads the ids of a batch back by request id: MySQL reports
	// only the first id of a multi-row insert, and unless consecutiveIDs the
	// others need not follow it.
	rereadIDs bool
	stop      chan struct{}
	wg        sync.WaitGroup
	// busy counts the writers writing a batch now.
	busy atomic.Int32
	// beforeWrite runs core's TestHooks.BeforeCouponWrite, which stays nil
	// in production; a test sets it to hold a batch back, or break the
	// database, before its transaction begins.
	beforeWrite func()
}

// couponWrite is one coupon waiting to be written, the events its claim
// writes besides coupon.claimed, and its answer.
type couponWrite struct {
	c *models.Coupon
	// currency is that of the coupon's value (its template's), which its
	// coupon.claimed event carries.
	currency string
	events   []events.NewEvent
	done     chan error
	// fixed keeps the code (an imported one): a collision refuses the row
	// instead of drawing a new code.
	fixed bool
}

// maxCodeRetries bounds how often a row is written again with a new code after
// its random code collided with another coupon's.
const maxCodeRetries = 3

// newCouponWriter starts writers goroutines that each write one batch at a time.
func newCouponWriter(db *gorm.DB, rereadIDs bool, writers, maxBatch int, timeout time.Duration, newCode func() string,
	observe func(int), emit func(*gorm.DB, []*couponWrite) error) *couponWriter {
	w := &couponWriter{
		db: db, rereadIDs: rereadIDs, timeout: timeout, maxBatch: maxBatch, newCode: newCode, observe: observe, emit: emit,
		queue: make(chan *couponWrite, writers*maxBatch),
		stop:  make(chan struct{}),
	}
	for range writers {
		w.wg.Add(1)
		go w.run()
	}
	return w
}

// write queues c (its Code set) and waits until it is committed, with its
// events, or refused. It waits even when ctx ends: the row may be written
// anyway, and the caller must know whether it was. The wait is bounded by the
// writer's timeout.
func (w *couponWriter) write(ctx context.Context, c *models.Coupon, currency string, fixed bool, events []events.NewEvent) error {
	req := &couponWrite{c: c, currency: currency, events: events, done: make(chan error, 1), fixed: fixed}
	select {
	case w.queue <- req:
	case <-ctx.Done():
		return ctx.Err() // not queued: surely not written
	case <-w.stop:
		return errWriterClosed
	}
	return <-req.done
}

var errWriterClosed = errors.New("coupon writer closed")

// close stops the writers once the queued rows are written.
func (w *couponWriter) close() {
	close(w.stop)
	w.wg.Wait()
}

func (w *couponWriter) run() {
	defer w.wg.Done()
	batch := make([]*couponWrite, 0, w.maxBatch)
	for {
		select {
		case req := <-w.queue:
			batch = append(batch[:0], req)
		case <-w.stop:
			// Answer what is still queued, so that no caller waits for ever.
			for {
				select {
				case req := <-w.queue:
					w.flush([]*couponWrite{req})
				default:
					return
				}
			}
		}
		batch = w.fill(batch)
		w.busy.Add(1)
		w.flush(batch)
		w.busy.Add(-1)
	}
}

// fill adds to batch the rows already waiting. When another writer is busy
// (the database is the bottleneck, rows are arriving faster than commits) it
// also waits up to batchLinger for more: otherwise an idle writer takes each
// row alone as it arrives, and under a flash sale most inserts carried one
// row (3,468 of 4,943 in a benchmark run), each its own commit. Alone, a row
// is written at once.
func (w *couponWriter) fill(batch []*couponWrite) []*couponWrite {
	var linger <-chan time.Time
	for len(batch) < w.maxBatch {
		select {
		case req := <-w.queue:
			batch = append(batch, req)
			continue
		default:
		}
		if linger == nil {
			if w.busy.Load() == 0 {
				return batch
			}
			t := time.NewTimer(batchLinger)
			defer t.Stop()
			linger = t.C
		}
		select {
		case req := <-w.queue:
			batch = append(batch, req)
		case <-linger:
			return batch
		case <-w.stop:
			return batch
		}
	}
	return batch
}

// batchLinger is how long a writer waits for more rows while another writer
// is busy: a fraction of a loaded commit's time.
const batchLinger = time.Millisecond

// flush writes a batch in one INSERT, and its events, in one transaction.
// If the database refuses it (one row's slot, ordinal, code or request id is
// taken, or a deadlock), each row is written alone so that each caller gets
// its own answer.
func (w *couponWriter) flush(batch []*couponWrite) {
	if w.observe != nil {
		w.observe(len(batch))
	}
	if w.beforeWrite != nil {
		w.beforeWrite()
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	if len(batch) > 1 {
		rows := make([]*models.Coupon, len(batch))
		for i, req := range batch {
			rows[i] = req.c
		}
		err := w.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(&rows).Error; err != nil {
				return err
			}
			if w.rereadIDs {
				if err := w.readIDs(tx, rows); err != nil {
					return err
				}
			}
			return w.emit(tx, batch)
		})
		if err == nil {
			for _, req := range batch {
				req.done <- nil
			}
			return
		}
		_, unique := core.UniqueViolation(err)
		if !unique && !core.IsDeadlock(err) {
			for _, req := range batch {
				req.c.ID = 0
				req.done <- err
			}
			return
		}
		for _, req := range batch {
			req.c.ID = 0
		}
	}
	for _, req := range batch {
		req.done <- w.insertOne(ctx, req)
	}
}

// insertOne writes one row and its events, drawing a new code when the
// random one collided.
func (w *couponWriter) insertOne(ctx context.Context, req *couponWrite) error {
	c := req.c
	for try := 0; ; try++ {
		c.ID = 0
		err := w.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(c).Error; err != nil {
				return err
			}
			return w.emit(tx, []*couponWrite{req})
		})
		if err != nil {
			c.ID = 0
		}
		if index, ok := core.UniqueViolation(err); ok && index == core.UniqueCode && !req.fixed && try < maxCodeRetries {
			c.Code = w.newCode()
			continue
		}
		return err
	}
}

// readIDs sets the ids of rows just inserted, reading them through tx.
func (w *couponWriter) readIDs(tx *gorm.DB, rows []*models.Coupon) error {
	keys := make([]string, len(rows))
	for i, c := range rows {
		keys[i] = c.RequestID
	}
	var got []struct {
		ID        int64
		RequestID string
	}
	if err := tx.Model(&models.Coupon{}).Select("id, request_id").
		Where("request_id IN ?", keys).Scan(&got).Error; err != nil {
		return err
	}
	ids := make(map[string]int64, len(got))
	for _, g := range got {
		ids[g.RequestID] = g.ID
	}
	for _, c := range rows {
		c.ID = ids[c.RequestID]
	}
	return nil
}

// emitClaimEvents writes the events of a batch of claimed coupons inside the
// transaction that inserts them: coupon.claimed for each, then the events its
// claim adds (claimSideEvents).
func (s *Claims) emitClaimEvents(tx *gorm.DB, rows []*couponWrite) error {
	evs := make([]events.NewEvent, 0, len(rows))
	for _, r := range rows {
		evs = append(evs, events.NewEvent{Typ: models.EventCouponClaimed, Data: models.NewCouponEvent(r.c, r.currency)})
		evs = append(evs, r.events...)
	}
	return s.events.EmitEvents(tx, evs)
}

// Close stops the service's background writers once the coupon rows they
// hold are written. Call it after the last request has finished.
func (s *Claims) Close() { s.writer.close() }
