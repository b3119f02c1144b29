package dds

import (
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
)

// Batches (format minor 1, docs/DDS.md §1 "Batches"). A supplier that
// writes related values together brackets them: SiShBatch += 1 before,
// SiShBatchEnd += 1 after (any number of writers, nested or concurrent).
// No batch is open when the two are equal. The daemon copies a supplier's
// values only when none is open and none began during the copy, so one
// copy holds each batch whole or not at all.
//
// A writer that runs batches back to back would starve such a reader, so
// the daemon also raises SiShReading to an odd value while it copies, and
// a writer about to begin a batch waits for it to turn even, at most
// WriterHoldOff. The daemon waits for the supplier only when it has no
// consistent copy to fall back on (its first read, or contexts added
// since), and then at most ReadWait for the batch open to end; otherwise
// its attempts are bounded, and a supplier whose counters lie (a batch
// never ended) only gets its previous consistent values served.

// Bounds of one consistent read: attempts in all (an attempt that finds a
// batch open costs two loads), and copies among them.
const (
	ReadAttempts = 128
	ReadCopies   = 4
)

// ReadWait is the longest a read with nothing to fall back on waits for
// an open batch to end (a batch of 60,000 values takes a few hundred
// microseconds; new batches wait for the read). Without it a walk that
// came while a large supplier wrote would find none of its values.
const ReadWait = 5 * time.Millisecond

const readPause = 50 * time.Microsecond

// WriterHoldOff (ddswire) is the longest a writer waits, before a batch,
// for the daemon's copy to end.

// ReadConsistent runs copyValues, which loads the supplier's values from
// the data area, until one run saw no batch open or begun, at most
// ReadCopies runs within ReadAttempts tries. It reports whether that
// happened; if not, what copyValues loaded last may mix batches. It
// raises SiShReading for the duration (odd, then even). mem is the whole
// mapping. Every try is a few atomic loads; once they are spent, a batch
// still open is waited for, at most wait (0: not at all).
func ReadConsistent(mem []byte, wait time.Duration, copyValues func() error) (ok bool, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer ddswire.RecoverFault(&err)
	pb, err := ddswire.FieldPtr(mem, ddswire.OffBatch, 4)
	if err != nil {
		return false, err
	}
	pe, _ := ddswire.FieldPtr(mem, ddswire.OffBatchEnd, 4)
	pr, _ := ddswire.FieldPtr(mem, ddswire.OffReading, 4)
	begun, ended, reading := (*uint32)(pb), (*uint32)(pe), (*uint32)(pr)
	// The next odd value, whatever the file holds: even a value a dead
	// daemon left odd changes, so writers heed this read.
	r := (atomic.LoadUint32(reading) + 1) | 1
	atomic.StoreUint32(reading, r)
	defer atomic.StoreUint32(reading, r+1)
	copies := 0
	var deadline time.Time
	for try := 0; ; try++ {
		e := atomic.LoadUint32(ended)
		b := atomic.LoadUint32(begun)
		if b != e { // a batch is open
			switch {
			case try < ReadAttempts:
				continue
			case wait <= 0:
				return false, nil
			case deadline.IsZero():
				deadline = time.Now().Add(wait)
			case time.Now().After(deadline):
				return false, nil
			}
			time.Sleep(readPause)
			continue
		}
		copies++
		if err := copyValues(); err != nil {
			return false, err
		}
		// Ended was read before begun, so b == e meant no batch open at
		// that moment; an unchanged begun means none began since.
		if atomic.LoadUint32(begun) == b {
			return true, nil
		}
		if copies == ReadCopies || try >= ReadAttempts && wait <= 0 {
			return false, nil
		}
	}
}

// LoadBatches reads SiShBatch and SiShBatchEnd (for messages and tests).
func LoadBatches(mem []byte) (begun, ended uint32, err error) {
	if begun, err = load32(mem, ddswire.OffBatch); err != nil {
		return 0, 0, err
	}
	ended, err = load32(mem, ddswire.OffBatchEnd)
	return begun, ended, err
}

// LoadReading reads SiShReading.
func LoadReading(mem []byte) (uint32, error) { return load32(mem, ddswire.OffReading) }

// load32 reads the 32-bit word at off of a supplier's file, a fault of
// its mapping (the supplier truncated the file) being an error.
func load32(mem []byte, off uint64) (v uint32, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer ddswire.RecoverFault(&err)
	p, err := ddswire.FieldPtr(mem, off, 4)
	if err != nil {
		return 0, err
	}
	return atomic.LoadUint32((*uint32)(p)), nil
}
