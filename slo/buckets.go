package slo

import "time"

// Bucket sizes. Every objective keeps 1-minute buckets over 3 days, from
// which its burn rates (5 min to 3 days) and the SLI of a window up to 3
// days are summed; a window beyond 3 days is summed from 1-hour buckets
// over the window. Either way the memory is fixed when the objective is
// made, whatever the transaction rate.
const (
	Fine    = time.Minute
	FineN   = 3 * 24 * 60
	Coarse  = time.Hour
	MaxSpan = 90 * 24 * time.Hour
	// FineSpan is the longest window summed from the fine buckets.
	FineSpan = FineN * Fine
)

// fine holds good/total counts per minute: uint32 each, which holds a
// minute of 71 million completions a second; a busier minute saturates.
type fine struct {
	head int64 // index (unix time / Fine) of the newest bucket; 0: none yet
	b    [FineN][2]uint32
}

// coarse holds the counts per hour of a window longer than FineSpan.
type coarse struct {
	head int64
	b    [][2]uint64
}

func addSat32(p *uint32, v uint64) { *p = uint32(min(uint64(*p)+v, 1<<32-1)) }

// advance makes m the newest bucket, clearing those it passes.
func advance(head *int64, m int64, n int, clear func(int)) {
	if *head == 0 || m-*head >= int64(n) {
		for i := range n {
			clear(i)
		}
		*head = m
		return
	}
	for k := *head + 1; k <= m; k++ {
		clear(int(k % int64(n)))
	}
	*head = m
}

// put counts total completions, bad of them not good, in bucket m of
// the ring (head-FineN < m <= head) and returns what the bucket gained
// (less than asked once it saturates).
func (f *fine) put(m int64, total, bad uint64) [2]uint64 {
	x := &f.b[m%FineN]
	old := *x
	addSat32(&x[0], total)
	addSat32(&x[1], bad)
	return [2]uint64{uint64(x[0] - old[0]), uint64(x[1] - old[1])}
}

// sum is the counts of the n buckets ending with bucket now (which is
// partly elapsed): those the ring still holds. Reads take the running
// sums instead (sums.go); this is their reference and their restore.
func (f *fine) sum(now int64, n int) (total, bad uint64) {
	lo, hi := max(now-int64(n), f.head-FineN), min(now, f.head)
	for m := lo + 1; m <= hi && f.head != 0; m++ {
		x := f.b[m%FineN]
		total += uint64(x[0])
		bad += uint64(x[1])
	}
	return total, bad
}

func (c *coarse) sum(now int64) (total, bad uint64) {
	n := int64(len(c.b))
	lo, hi := max(now-n, c.head-n), min(now, c.head)
	for h := lo + 1; h <= hi && c.head != 0; h++ {
		x := c.b[h%n]
		total += x[0]
		bad += x[1]
	}
	return total, bad
}

// minuteOf and hourOf are the bucket indexes of t.
func minuteOf(t time.Time) int64 { return t.Unix() / int64(Fine/time.Second) }
func hourOf(t time.Time) int64   { return t.Unix() / int64(Coarse/time.Second) }
