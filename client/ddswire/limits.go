package ddswire

import "fmt"

// Fixed by the C structures (SI_MAXNAME and SI_MAXLNAME include the NUL).
const (
	MaxName    = 31   // statistic and context short names
	MaxDescr   = 63   // descriptions
	MaxPath    = 63   // context path names (cx_create.path)
	MaxFile    = 4095 // shared file path (PATH_MAX - 1)
	MaxErrmsg  = 1023 // SpmiErrmsg text in replies
	MaxHeader  = 4096 // largest header a future minor version may declare
	frameHead  = 8    // length + type + reserved
	ProtoMajor = 1    // protocol version in Init
)

// Limits bound what one supplier may register. The zero value of a field
// means its default; the daemon's configuration sets them.
type Limits struct {
	MaxFrame      int    // bytes in one frame body
	MaxContexts   int    // permanent contexts plus live volatile ones
	MaxTemplates  int    // entries in the volatile context table
	MaxStats      int    // statistics per context
	MaxStatsTotal int    // statistics in one Init, all contexts together
	MaxArea       uint32 // data area bytes
}

// DefaultLimits are used for every zero field of a Limits.
var DefaultLimits = Limits{
	MaxFrame:      4 << 20,
	MaxContexts:   1024,
	MaxTemplates:  64,
	MaxStats:      1024,
	MaxStatsTotal: 65536,
	MaxArea:       64 << 20,
}

// ceilings keep configured limits where the wire and the C int arguments
// can still express them.
var ceilings = Limits{
	MaxFrame:      64 << 20,
	MaxContexts:   1 << 20,
	MaxTemplates:  65536, // AddCx's ix is an unsigned short
	MaxStats:      1 << 20,
	MaxStatsTotal: 1 << 24,
	MaxArea:       1 << 30,
}

// Ceilings are the largest limits the formats can carry. A supplier
// library checks its declarations against them (or against limits it was
// given) and leaves the configured limits to the daemon.
func Ceilings() Limits { return ceilings }

// Norm returns l with zero fields set to their defaults, or an error
// naming a field outside what the formats can carry.
func (l Limits) Norm() (Limits, error) { return l.fix(false) }

// norm is Norm for the codecs: an out-of-range field is clamped into range
// rather than failing a decode (the daemon checks its configuration with
// Norm at start-up).
func (l Limits) norm() Limits {
	n, _ := l.fix(true)
	return n
}

func (l Limits) fix(clamp bool) (Limits, error) {
	type f struct {
		name     string
		v        *int
		def, max int
	}
	for _, x := range []f{
		{"MaxFrame", &l.MaxFrame, DefaultLimits.MaxFrame, ceilings.MaxFrame},
		{"MaxContexts", &l.MaxContexts, DefaultLimits.MaxContexts, ceilings.MaxContexts},
		{"MaxTemplates", &l.MaxTemplates, DefaultLimits.MaxTemplates, ceilings.MaxTemplates},
		{"MaxStats", &l.MaxStats, DefaultLimits.MaxStats, ceilings.MaxStats},
		{"MaxStatsTotal", &l.MaxStatsTotal, DefaultLimits.MaxStatsTotal, ceilings.MaxStatsTotal},
	} {
		switch {
		case *x.v == 0:
			*x.v = x.def
		case *x.v < 0 || *x.v > x.max:
			if !clamp {
				return l, fmt.Errorf("dds limits: %s = %d, allowed 1..%d", x.name, *x.v, x.max)
			}
			*x.v = min(max(*x.v, 1), x.max)
		}
	}
	if l.MaxArea == 0 {
		l.MaxArea = DefaultLimits.MaxArea
	}
	if l.MaxArea > ceilings.MaxArea || l.MaxArea%8 != 0 {
		if !clamp {
			return l, fmt.Errorf("dds limits: MaxArea = %d, must be a multiple of 8 up to %d", l.MaxArea, ceilings.MaxArea)
		}
		l.MaxArea = max(min(l.MaxArea, ceilings.MaxArea)&^7, 8)
	}
	return l, nil
}

// MaxFileLen is the largest shared file a daemon should map: checked
// against fstat before mmap so a huge file is refused without mapping it.
func (l Limits) MaxFileLen() int64 {
	return int64(MaxHeader) + int64(l.norm().MaxArea)
}
