// Package settable holds the tables managers write over SNMP through the
// AgentX master (RFC 2741 Set, agentx.Writer): conceptual rows with
// RowStatus and StorageType (RFC 2579) over a Source that owns the rows
// once active (the hotsets, the RTime/LAN hosts), so that a row written
// over SNMP and one from the configuration or the control socket are one
// and the same thing.
//
// A TestSet is judged whole before anything changes: every VarBind's type,
// length and range, then each row as the PDU leaves it (the other VarBinds
// may supply its missing columns), then the Source's own validation and
// limits. Commit applies row by row and remembers what it did, so Undo
// puts back exactly that.
//
// It is hand-written: net-snmp's table helpers are C, and no Go library
// implements RowStatus tables for an AgentX subagent.
package settable

import "github.com/perfagent/subagent/asn1tree"

// RowStatus values (RFC 2579).
const (
	Active        = 1
	NotInService  = 2
	NotReady      = 3
	CreateAndGo   = 4
	CreateAndWait = 5
	Destroy       = 6
)

// StorageType values (RFC 2579).
const (
	Other       = 1
	Volatile    = 2
	NonVolatile = 3
	Permanent   = 4
	ReadOnly    = 5
)

// Col is one writable (or read-only) column besides the index,
// StorageType and RowStatus.
type Col struct {
	Name     string
	Kind     asn1tree.Kind // Integer32 or OctetString; Gauge32 for read-only numbers
	Min, Max int64         // Integer32's range, OctetString's length
	Default  *asn1tree.Value
	ReadOnly bool
}

// Row is one conceptual row: its index (a name), its columns in the order
// of the table's Cols then Added, its RowStatus and StorageType.
type Row struct {
	Name    string
	Vals    []asn1tree.Value
	Status  int
	Storage int
}

func (r *Row) clone() *Row {
	c := *r
	c.Vals = append([]asn1tree.Value(nil), r.Vals...)
	return &c
}

// complete tells whether every writable column has a value.
func complete(cols []Col, r *Row) bool {
	for i, v := range r.Vals {
		if v.Kind == asn1tree.NoValue && !cols[i].ReadOnly {
			return false
		}
	}
	return true
}
