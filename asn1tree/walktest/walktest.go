// Package walktest serves the walk tests of the SNMP front ends: a view
// source whose moments each hold a table of their own, so that a walk
// that mixes moments shows it.
package walktest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

// Moment is a handle a Moments gives out.
type Moment struct {
	N     uint64
	At    time.Time // when its data was "collected"
	Bytes int64     // what it tells the walks it keeps alive (Moments.Bytes)
}

// Pinned implements asn1tree.Pinned: each moment is data of its own.
func (m *Moment) Pinned() (any, int64) { return m, m.Bytes }

// Moments makes a new moment each time it is asked for the current one.
// Moment n's table (Table.<column>.<row> for each of Cols) has the rows
// n to n+4, every cell holding n (a Gauge32): a walk that mixes moments
// shows cells of other values, and rows with some columns only. Extra is
// served beside the table.
type Moments struct {
	Table asn1tree.OID
	Cols  []uint32
	Extra []asn1tree.Entry[asn1tree.Value]
	Bytes int64 // each moment's size for the walks' budget; 0: nothing

	mu    sync.Mutex
	n     uint64
	fresh int // calls for the current moment
}

// Dated is a view that tells when its data was collected, as spmi's
// answers do.
type Dated struct {
	asn1tree.View
	At time.Time
}

// DataTime implements asn1tree.DataTimer.
func (v Dated) DataTime() time.Time { return v.At }

// Source is the front ends' source of views.
func (s *Moments) Source(t testing.TB) asn1tree.Source {
	return func(at any) (asn1tree.View, any) {
		m, _ := at.(*Moment)
		if m == nil {
			s.mu.Lock()
			s.n++
			s.fresh++
			m = &Moment{N: s.n, At: time.Now(), Bytes: s.Bytes}
			s.mu.Unlock()
		}
		e := slices.Clone(s.Extra)
		for _, col := range s.Cols {
			for row := m.N; row < m.N+5; row++ {
				e = append(e, asn1tree.Entry[asn1tree.Value]{OID: s.Table.Append(col, uint32(row)), Val: asn1tree.Gauge(uint32(m.N))})
			}
		}
		slices.SortFunc(e, func(a, b asn1tree.Entry[asn1tree.Value]) int { return asn1tree.Compare(a.OID, b.OID) })
		tr, err := asn1tree.Build(e)
		if err != nil {
			t.Fatal(err)
		}
		return Dated{View: tr, At: m.At}, m
	}
}

// Counts are the last moment made and how many calls asked for the
// current one.
func (s *Moments) Counts() (current uint64, fresh int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, s.fresh
}

// CheckOneMoment checks that cells ("column.row" to value) are moment
// n's whole table.
func (s *Moments) CheckOneMoment(t testing.TB, what string, cells map[string]uint64, n uint64) {
	t.Helper()
	var want, got []string
	for _, col := range s.Cols {
		for row := n; row < n+5; row++ {
			want = append(want, fmt.Sprintf("%d.%d", col, row))
		}
	}
	for c, v := range cells {
		got = append(got, c)
		if v != n {
			t.Errorf("%s: cell %s from moment %d, the walk started at %d", what, c, v, n)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: cells %v, moment %d has %v", what, got, n, want)
	}
}
