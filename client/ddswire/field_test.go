package ddswire_test

import (
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
)

func TestFieldOf(t *testing.T) {
	s := ddswiretest.GuideInit().Templates[0].Stats[1]
	if f := ddswire.FieldOf(&s, 4096); f != (ddswire.Field{Off: 4104, Size: 8, Type: ddswire.SiLong, Present: ddswire.SiLong}) {
		t.Fatalf("field %+v", f)
	}
}

// Each data type is read as one class, and served as SiFloat exactly when
// that class is a float or a timeval.
func TestDataTypeClasses(t *testing.T) {
	want := map[ddswire.DataType]ddswire.Class{ddswire.SiULong: ddswire.ClassUnsigned, ddswire.SiLong: ddswire.ClassSigned, ddswire.SiUInt: ddswire.ClassUnsigned, ddswire.SiInt: ddswire.ClassSigned,
		ddswire.SiUShort: ddswire.ClassUnsigned, ddswire.SiShort: ddswire.ClassSigned, ddswire.SiChar: ddswire.ClassUnsigned, ddswire.SiAddr: ddswire.ClassUnsigned,
		ddswire.SiTimeval: ddswire.ClassTimeval, ddswire.SiFloat: ddswire.ClassFloat, ddswire.SiDouble: ddswire.ClassFloat, ddswire.SiPtr: ddswire.ClassUnsigned, ddswire.SiUnsign: ddswire.ClassUnsigned}
	for d := range ddswire.NumDataTypes {
		c := d.Class()
		if c != want[d] || d.PresentedFloat() != (c == ddswire.ClassFloat || c == ddswire.ClassTimeval) {
			t.Errorf("%v: class %d, float %v", d, c, d.PresentedFloat())
		}
	}
}
