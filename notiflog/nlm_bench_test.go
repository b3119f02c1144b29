package notiflog

import (
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

var benchExt = asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1, 111}

// bigView is a full log of n entries of 10 VarBinds each.
func bigView(n int) View {
	v := View{Max: MaxEntries, Age: time.Hour, Version: 1}
	vars := make([]Var, 10)
	for j := range vars {
		vars[j] = Var{OID: asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1, 14, 0, uint32(j + 1), 0}, Kind: asn1tree.OctetString, Bytes: []byte("pumpalarm")}
	}
	for i := 0; i < n; i++ {
		v.Entries = append(v.Entries, Entry{Index: uint32(i + 1), Time: time.Unix(1700000000, 0), OID: trapOID, Vars: vars,
			Outcomes: []Outcome{{Path: "v2c trap 127.0.0.1:162", Result: "sent", OK: true}}})
	}
	return v
}

// Indexing a full log: what the first request after a change pays.
func BenchmarkIndexFullLog(b *testing.B) {
	v := bigView(MaxEntries)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		newMIBView(v, benchExt)
	}
}

// A GetNext in the middle of a full log's variable table.
func BenchmarkGetNextFullLog(b *testing.B) {
	m := newMIBView(bigView(MaxEntries), benchExt)
	start := asn1tree.MustParse("1.3.6.1.2.1.92.1.3.2.1.8.0.5000.3")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, ok := m.Search(start, false, nil); !ok {
			b.Fatal("no next")
		}
	}
}

// The materialized tree the first version built at every change, for
// comparison.
func BenchmarkMaterializeFullLog(b *testing.B) {
	v := bigView(MaxEntries)
	for i := 0; i < b.N; i++ {
		buildReference(&v, benchExt)
	}
}
