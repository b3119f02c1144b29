package config

import "github.com/perfagent/subagent/client/ddswire"

// DDSLimits bound what one supplier may register (dds.Limits).
type DDSLimits struct {
	MaxContexts   int `mapstructure:"max_contexts"`
	MaxTemplates  int `mapstructure:"max_templates"`
	MaxStats      int `mapstructure:"max_stats"`
	MaxStatsTotal int `mapstructure:"max_stats_total"`
	MaxArea       int `mapstructure:"max_area"`
}

// Limits is the supplier server's form of the limits.
func (l DDSLimits) Limits() ddswire.Limits {
	return ddswire.Limits{MaxContexts: l.MaxContexts, MaxTemplates: l.MaxTemplates, MaxStats: l.MaxStats,
		MaxStatsTotal: l.MaxStatsTotal, MaxArea: uint32(l.MaxArea)}
}

func (d DDS) checkLimits(bad func(key, format string, args ...any)) {
	c := ddswire.Ceilings()
	for _, f := range []struct {
		key   string
		v, mx int
	}{
		{"dds.max_contexts", d.MaxContexts, c.MaxContexts},
		{"dds.max_templates", d.MaxTemplates, c.MaxTemplates},
		{"dds.max_stats", d.MaxStats, c.MaxStats},
		{"dds.max_stats_total", d.MaxStatsTotal, c.MaxStatsTotal},
	} {
		if f.v < 1 || f.v > f.mx {
			bad(f.key, "%d is not from 1 to %d", f.v, f.mx)
		}
	}
	if a := d.MaxArea; a < 8 || a > int(c.MaxArea) || a%8 != 0 {
		bad("dds.max_area", "%d is not a multiple of 8 from 8 to %d (bytes)", a, c.MaxArea)
	}
}
