package ddswire

import "testing"

func TestFieldOf(t *testing.T) {
	s := guideInit().Templates[0].Stats[1]
	if f := FieldOf(&s, 4096); f != (Field{Off: 4104, Size: 8, Type: SiLong, Present: SiLong}) {
		t.Fatalf("field %+v", f)
	}
}

// Each data type is read as one class, and served as SiFloat exactly when
// that class is a float or a timeval.
func TestDataTypeClasses(t *testing.T) {
	want := map[DataType]Class{SiULong: ClassUnsigned, SiLong: ClassSigned, SiUInt: ClassUnsigned, SiInt: ClassSigned,
		SiUShort: ClassUnsigned, SiShort: ClassSigned, SiChar: ClassUnsigned, SiAddr: ClassUnsigned,
		SiTimeval: ClassTimeval, SiFloat: ClassFloat, SiDouble: ClassFloat, SiPtr: ClassUnsigned, SiUnsign: ClassUnsigned}
	for d := range numDataTypes {
		c := d.Class()
		if c != want[d] || d.PresentedFloat() != (c == ClassFloat || c == ClassTimeval) {
			t.Errorf("%v: class %d, float %v", d, c, d.PresentedFloat())
		}
	}
}
