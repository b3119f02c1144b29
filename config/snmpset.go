package config

import "time"

// SNMPSet configures the tables managers write over SNMP (settable): the
// rows waiting for activation, per table.
type SNMPSet struct {
	MaxWaitingRows  int           `mapstructure:"max_waiting_rows"`
	WaitingLifetime time.Duration `mapstructure:"waiting_lifetime"`
}

func (s SNMPSet) check(bad func(key, format string, args ...any)) {
	if n := s.MaxWaitingRows; n < 1 || n > 1000 {
		bad("snmp_set.max_waiting_rows", "%d is not from 1 to 1000", n)
	}
	if d := s.WaitingLifetime; d < 5*time.Second || d > 5*time.Minute {
		bad("snmp_set.waiting_lifetime", "%v is not from 5s to 5m", d)
	}
}
