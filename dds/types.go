package dds

import (
	"fmt"

	"github.com/perfagent/subagent/spmi"
)

// ValType is the guide's enum ValType (C numbering, on the wire as a byte).
type ValType uint8

const (
	SiCounter ValType = iota
	SiQuantity
)

func (v ValType) String() string {
	switch v {
	case SiCounter:
		return "SiCounter"
	case SiQuantity:
		return "SiQuantity"
	}
	return fmt.Sprintf("ValType(%d)", uint8(v))
}

// Spmi is the spmi package's equivalent.
func (v ValType) Spmi() spmi.ValType {
	if v == SiQuantity {
		return spmi.SiQuantity
	}
	return spmi.SiCounter
}

// DataType is the guide's enum DataType, in its C numbering (SiULong = 0).
// It differs from spmi.DataType, which only knows the presented formats.
type DataType uint8

const (
	SiULong DataType = iota
	SiLong
	SiUInt
	SiInt
	SiUShort
	SiShort
	SiChar
	SiAddr
	SiTimeval
	SiFloat
	SiDouble
	SiPtr
	SiUnsign
	numDataTypes
)

var dataTypeNames = [...]string{
	"SiULong", "SiLong", "SiUInt", "SiInt", "SiUShort", "SiShort", "SiChar",
	"SiAddr", "SiTimeval", "SiFloat", "SiDouble", "SiPtr", "SiUnsign",
}

func (d DataType) String() string {
	if d < numDataTypes {
		return dataTypeNames[d]
	}
	return fmt.Sprintf("DataType(%d)", uint8(d))
}

// Valid reports whether d is one of the guide's values.
func (d DataType) Valid() bool { return d < numDataTypes }

type class uint8

const (
	cUnsigned class = iota
	cSigned
	cFloat
	cTimeval
)

func (d DataType) class() class {
	switch d {
	case SiLong, SiInt, SiShort:
		return cSigned
	case SiFloat, SiDouble:
		return cFloat
	case SiTimeval:
		return cTimeval
	}
	// SiChar is read as unsigned: it names u_char flags and small counters.
	return cUnsigned
}

// SizeOK reports whether a source field of this type may have the given
// size. Integer types take any of 1, 2, 4, 8, since SZ_OFF records sizeof
// of whatever the field really is (u_long is 4 bytes on 386, 8 on amd64);
// floats are 4 or 8; a timeval is two 32- or two 64-bit words.
func (d DataType) SizeOK(size uint32) bool {
	switch d.class() {
	case cFloat:
		return size == 4 || size == 8
	case cTimeval:
		return size == 8 || size == 16
	}
	return size == 1 || size == 2 || size == 4 || size == 8
}

// Presented is the spmi format a statistic of this data_type is served in:
// the guide supports only SiLong and SiFloat, so floats and timevals are
// SiFloat and every integer type SiLong.
func (d DataType) Presented() spmi.DataType {
	switch d.class() {
	case cFloat, cTimeval:
		return spmi.SiFloat
	}
	return spmi.SiLong
}

// InstFreq is the guide's enum SiInstFreq.
type InstFreq uint8

const (
	SiNoInst InstFreq = iota
	SiCfgInst
	SiContInst
)

// Spmi is the spmi package's equivalent (same numbering).
func (f InstFreq) Spmi() spmi.InstFreq { return spmi.InstFreq(f) }

func (f InstFreq) String() string {
	switch f {
	case SiNoInst:
		return "SiNoInst"
	case SiCfgInst:
		return "SiCfgInst"
	case SiContInst:
		return "SiContInst"
	}
	return fmt.Sprintf("SiInstFreq(%d)", uint8(f))
}
