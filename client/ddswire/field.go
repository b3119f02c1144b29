package ddswire

import "github.com/perfagent/subagent/client/spmierr"

// Field is where a statistic's source value lies in the data area and how
// to present it: the size, offset and type of SZ_OFF, and data_type.
type Field struct {
	Off     uint32 // from the start of the data area (slot offset + stat offset)
	Size    uint32
	Type    DataType // source format
	Present DataType // format presented to the API (data_type)
}

// FieldOf is the field of statistic s in a data area part starting at base
// (0 for permanent statistics, the slot offset for volatile ones).
func FieldOf(s *Stat, base uint32) Field {
	return Field{Off: base + s.Offset, Size: s.Size, Type: s.Type, Present: s.DataType}
}

// Check tells whether f can be read from a data area of areaLen bytes:
// a known type, a size that type can have, aligned to its size (8 at most)
// so one atomic load reads it, and inside the area.
func (f Field) Check(areaLen uint32) error {
	switch {
	case !f.Type.Valid():
		return spmierr.Errorf(spmierr.SiBadArgument, "source type %d is not a DataType", uint8(f.Type))
	case !f.Present.Valid():
		return spmierr.Errorf(spmierr.SiBadArgument, "data_type %d is not a DataType", uint8(f.Present))
	case !f.Type.SizeOK(f.Size):
		return spmierr.Errorf(spmierr.SiBadArgument, "a %v source field cannot be %d bytes", f.Type, f.Size)
	case f.Off%min(f.Size, 8) != 0:
		return spmierr.Errorf(spmierr.SiBadArgument, "%d-byte source field at offset %d is not %d-byte aligned", f.Size, f.Off, min(f.Size, 8))
	case uint64(f.Off)+uint64(f.Size) > uint64(areaLen):
		return spmierr.Errorf(spmierr.SiBadArgument, "source field [%d, +%d) ends past the %d-byte area", f.Off, f.Size, areaLen)
	}
	return nil
}
