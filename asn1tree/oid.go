// Package asn1tree holds the ASN.1 side of the data hierarchy: object
// identifiers, the SNMP-typed values a statistic is served as, and an
// immutable ordered index (Tree) that answers Get, GetNext and range walks
// in O(log n) without allocating.
package asn1tree

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// OID is an object identifier as a list of sub-identifiers.
type OID []uint32

// MaxLen is the longest OID accepted (RFC 2578 section 3.5 allows 128 sub-identifiers).
const MaxLen = 128

// ErrEmptyOID is returned by Parse for an empty string.
var ErrEmptyOID = errors.New("empty OID")

// Parse reads a dotted-decimal OID such as "1.3.6.1.4.1.32473.1"; a leading
// dot is accepted, as net-snmp prints numeric OIDs with one.
func Parse(s string) (OID, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), ".")
	if s == "" {
		return nil, ErrEmptyOID
	}
	parts := strings.Split(s, ".")
	if len(parts) > MaxLen {
		return nil, fmt.Errorf("OID %q has %d sub-identifiers, at most %d allowed", s, len(parts), MaxLen)
	}
	o := make(OID, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("OID %q: sub-identifier %d (%q) is not a number from 0 to 4294967295", s, i+1, p)
		}
		o[i] = uint32(n)
	}
	return o, nil
}

// MustParse is Parse for constants; it panics on a malformed literal.
func MustParse(s string) OID {
	o, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return o
}

// String formats the OID in dotted decimal without a leading dot.
func (o OID) String() string {
	b := make([]byte, 0, len(o)*4)
	for i, n := range o {
		if i > 0 {
			b = append(b, '.')
		}
		b = strconv.AppendUint(b, uint64(n), 10)
	}
	return string(b)
}

// Compare orders OIDs numerically sub-identifier by sub-identifier; a proper
// prefix sorts before its extensions. It returns -1, 0 or +1.
func Compare(a, b OID) int {
	n := len(a)
	if len(b) < n {
		n = len(b)
	}
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// Equal reports whether the OIDs are identical.
func (o OID) Equal(p OID) bool { return Compare(o, p) == 0 }

// HasPrefix reports whether p is a prefix of o (or equal to it).
func (o OID) HasPrefix(p OID) bool {
	if len(p) > len(o) {
		return false
	}
	for i := range p {
		if o[i] != p[i] {
			return false
		}
	}
	return true
}

// Append returns a new OID: o followed by subs. o itself is never modified.
func (o OID) Append(subs ...uint32) OID {
	r := make(OID, 0, len(o)+len(subs))
	r = append(r, o...)
	return append(r, subs...)
}

// Clone returns a copy that shares no memory with o.
func (o OID) Clone() OID { return append(OID(nil), o...) }
