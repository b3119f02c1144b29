package armring

import (
	"encoding/binary"
	"fmt"
)

// Entry states: a process writes an entry, then stores StatePublished in
// its first word (release); the daemon reads an entry only once published
// and copies it once. Entries are never changed after publication.
const (
	StateFree      = 0
	StatePublished = 1
)

// Verdicts of the daemon on an application entry, in its word at offset
// 8: the process learns there whether the application was registered.
// VerdictRefused is also what arm_init and arm_getid return for it.
const (
	VerdictNone       = 0  // not read yet
	VerdictRegistered = 1  // registered: served under RTime/ARM
	VerdictRefused    = -5 // refused at one of the daemon's limits
)

// ScanNow is the one byte a process may send on its connection after the
// Welcome: it asks the daemon to read its new entries now, so that it
// learns their verdicts without waiting for the next drain. The daemon
// reads anything else as the process's end.
const ScanNow = 'S'

// Metric types of the ARM 2.0 meta-data buffer (format 101).
const (
	Counter32   = 1
	Counter64   = 2
	CntrDivr32  = 3
	Gauge32     = 4
	Gauge64     = 5
	GaugeDivr32 = 6
	NumericID32 = 7
	NumericID64 = 8
	String8     = 9
	String32    = 10
)

// NumMetrics is the number of metric fields; field 6 is String #1.
const (
	NumMetrics = 6
	NumFields  = 7
)

// App is an application entry.
type App struct {
	ID    int32 // the appl_id the process returned to its caller
	Key   string
	Descr string
}

// Application entry offsets.
const (
	appOffState   = 0
	appOffID      = 4
	appOffVerdict = 8 // written by the daemon once it has read the entry
	appOffKey     = 16
	appOffDescr   = 48
)

// EncodeApp writes a (not its state) into b, AppLen bytes.
func EncodeApp(b []byte, a *App) {
	clear(b[4:AppLen])
	binary.LittleEndian.PutUint32(b[appOffID:], uint32(a.ID))
	putCstr(b[appOffKey:appOffKey+32], a.Key)
	putCstr(b[appOffDescr:appOffDescr+64], a.Descr)
}

// DecodeApp reads and checks a published application entry (AppLen bytes).
func DecodeApp(b []byte) (App, error) {
	var a App
	if len(b) != AppLen {
		return a, fmt.Errorf("application entry: %d bytes, want %d", len(b), AppLen)
	}
	a.ID = int32(binary.LittleEndian.Uint32(b[appOffID:]))
	a.Key = cstr(b[appOffKey : appOffKey+32])
	a.Descr = cstr(b[appOffDescr : appOffDescr+64])
	if a.ID <= 0 {
		return a, fmt.Errorf("application entry: id %d is not positive", a.ID)
	}
	if err := checkKey("application entry", a.Key); err != nil {
		return a, err
	}
	if err := checkText("application entry: description", a.Descr, MaxDescr); err != nil {
		return a, err
	}
	return a, nil
}

// Tran is a transaction entry, with the metric declarations of its
// arm_getid meta-data buffer: Types[i] is 0 for a field not declared.
type Tran struct {
	App    uint32 // index of the application entry
	ID     int32  // the tran_id the process returned to its caller
	Key    string
	Descr  string
	Detail string
	Types  [NumFields]uint32
	Names  [NumFields]string
}

// Transaction entry offsets.
const (
	tranOffState  = 0
	tranOffApp    = 4
	tranOffID     = 8
	tranOffKey    = 16
	tranOffDescr  = 48
	tranOffDetail = 112
	tranOffTypes  = 240
	tranOffNames  = 272
	metricNameLen = 44
)

// EncodeTran writes t (not its state) into b, TranLen bytes.
func EncodeTran(b []byte, t *Tran) {
	le := binary.LittleEndian
	clear(b[4:TranLen])
	le.PutUint32(b[tranOffApp:], t.App)
	le.PutUint32(b[tranOffID:], uint32(t.ID))
	putCstr(b[tranOffKey:tranOffKey+32], t.Key)
	putCstr(b[tranOffDescr:tranOffDescr+64], t.Descr)
	putCstr(b[tranOffDetail:tranOffDetail+128], t.Detail)
	for i := range NumFields {
		le.PutUint32(b[tranOffTypes+4*i:], t.Types[i])
		o := tranOffNames + metricNameLen*i
		putCstr(b[o:o+metricNameLen], t.Names[i])
	}
}

// ValidType says whether typ may be declared for field i (0: not declared).
func ValidType(i int, typ uint32) bool {
	if typ == 0 {
		return true
	}
	if i == NumMetrics {
		return typ == String32
	}
	return typ >= Counter32 && typ <= String8
}

// DecodeTran reads and checks a published transaction entry (TranLen bytes).
func DecodeTran(b []byte) (Tran, error) {
	var t Tran
	if len(b) != TranLen {
		return t, fmt.Errorf("transaction entry: %d bytes, want %d", len(b), TranLen)
	}
	le := binary.LittleEndian
	t.App = le.Uint32(b[tranOffApp:])
	t.ID = int32(le.Uint32(b[tranOffID:]))
	t.Key = cstr(b[tranOffKey : tranOffKey+32])
	t.Descr = cstr(b[tranOffDescr : tranOffDescr+64])
	t.Detail = cstr(b[tranOffDetail : tranOffDetail+128])
	if t.ID <= 0 {
		return t, fmt.Errorf("transaction entry: id %d is not positive", t.ID)
	}
	if err := checkKey("transaction entry", t.Key); err != nil {
		return t, err
	}
	if err := checkText("transaction entry: description", t.Descr, MaxDescr); err != nil {
		return t, err
	}
	if err := checkText("transaction entry: detail", t.Detail, MaxDetail); err != nil {
		return t, err
	}
	for i := range NumFields {
		t.Types[i] = le.Uint32(b[tranOffTypes+4*i:])
		if !ValidType(i, t.Types[i]) {
			return t, fmt.Errorf("transaction entry %q: field %d: type %d not allowed", t.Key, i+1, t.Types[i])
		}
		o := tranOffNames + metricNameLen*i
		t.Names[i] = cstr(b[o : o+metricNameLen])
		if err := checkText(fmt.Sprintf("transaction entry %q: field %d name", t.Key, i+1), t.Names[i], MaxMetric); err != nil {
			return t, err
		}
		if t.Types[i] == 0 && t.Names[i] != "" {
			return t, fmt.Errorf("transaction entry %q: field %d has a name but no type", t.Key, i+1)
		}
	}
	return t, nil
}
