package config

// DDSLimits bound what one supplier may register; their ceilings are the
// wire format's (ddswire.Ceilings), checked by the daemon (daemon.Check).
type DDSLimits struct {
	MaxContexts   int `mapstructure:"max_contexts"`
	MaxTemplates  int `mapstructure:"max_templates"`
	MaxStats      int `mapstructure:"max_stats"`
	MaxStatsTotal int `mapstructure:"max_stats_total"`
	MaxArea       int `mapstructure:"max_area"`
}
