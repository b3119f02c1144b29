package ddswire

import "unsafe"

// Header has SpmiShare's layout on every GOARCH, checked when the package
// compiles: on a machine that cannot run 32-bit programs, `GOARCH=386 go
// vet` still proves the 386 layout. Each index is 0 when the field sits at
// its constant; a field after it fails "index out of range", one before it
// "constant overflows uintptr".
func _() {
	var a [1]struct{}
	var h Header
	_ = a[unsafe.Offsetof(h.Magic)-OffMagic]
	_ = a[unsafe.Offsetof(h.Major)-OffMajor]
	_ = a[unsafe.Offsetof(h.Minor)-OffMinor]
	_ = a[unsafe.Offsetof(h.HdrLen)-OffHdrLen]
	_ = a[unsafe.Offsetof(h.AllocLen)-OffAllocLen]
	_ = a[unsafe.Offsetof(h.AreaOff)-OffAreaOff]
	_ = a[unsafe.Offsetof(h.AreaLen)-OffAreaLen]
	_ = a[unsafe.Offsetof(h.PermLen)-OffPermLen]
	_ = a[unsafe.Offsetof(h.Gen)-OffGen]
	_ = a[unsafe.Offsetof(h.PID)-OffPID]
	_ = a[unsafe.Offsetof(h.Flags)-OffFlags]
	_ = a[unsafe.Offsetof(h.Start)-OffStart]
	_ = a[unsafe.Offsetof(h.Area)-OffArea]
	_ = a[unsafe.Offsetof(h.T)-OffT]
	_ = a[unsafe.Offsetof(h.GoAway)-OffGoAway]
	_ = a[unsafe.Offsetof(h.Interval)-OffInterval]
	_ = a[unsafe.Offsetof(h.Subscrib)-OffSubscrib]
	_ = a[unsafe.Offsetof(h.PortNo)-OffPortNo]
	_ = a[unsafe.Offsetof(h.Pad)-OffPad]
	_ = a[unsafe.Offsetof(h.Name)-OffName]
	_ = a[unsafe.Offsetof(h.Batch)-OffBatch]
	_ = a[unsafe.Offsetof(h.BatchEnd)-OffBatchEnd]
	_ = a[unsafe.Offsetof(h.Reading)-OffReading]
	_ = a[unsafe.Offsetof(h.Pad2)-OffPad2]
	_ = a[unsafe.Offsetof(h.Res)-OffRes]
	_ = a[unsafe.Sizeof(h)-HeaderSize]
}
