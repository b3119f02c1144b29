package ddswire

import "fmt"

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

// DataType is the guide's enum DataType, in its C numbering (SiULong = 0).
// It differs from the daemon's spmi.DataType, which only knows the
// presented formats.
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

// Class is how a source field's bits are read: an unsigned or signed
// integer, an IEEE float, or a struct timeval.
type Class uint8

const (
	ClassUnsigned Class = iota
	ClassSigned
	ClassFloat
	ClassTimeval
)

// Class is how a field of this type is read.
func (d DataType) Class() Class {
	switch d {
	case SiLong, SiInt, SiShort:
		return ClassSigned
	case SiFloat, SiDouble:
		return ClassFloat
	case SiTimeval:
		return ClassTimeval
	}
	// SiChar is read as unsigned: it names u_char flags and small counters.
	return ClassUnsigned
}

// SizeOK reports whether a source field of this type may have the given
// size. Integer types take any of 1, 2, 4, 8, since SZ_OFF records sizeof
// of whatever the field really is (u_long is 4 bytes on 386, 8 on amd64);
// floats are 4 or 8; a timeval is two 32- or two 64-bit words.
func (d DataType) SizeOK(size uint32) bool {
	switch d.Class() {
	case ClassFloat:
		return size == 4 || size == 8
	case ClassTimeval:
		return size == 8 || size == 16
	}
	return size == 1 || size == 2 || size == 4 || size == 8
}

// PresentedFloat reports whether a statistic of this data_type is served
// as SiFloat: the guide supports only SiLong and SiFloat, so floats and
// timevals are SiFloat and every integer type SiLong.
func (d DataType) PresentedFloat() bool {
	c := d.Class()
	return c == ClassFloat || c == ClassTimeval
}

// InstFreq is the guide's enum SiInstFreq.
type InstFreq uint8

const (
	SiNoInst InstFreq = iota
	SiCfgInst
	SiContInst
)

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
