package rtimelan

import (
	"fmt"
	"hash/fnv"
	"net/netip"
	"strings"
)

// maxName is spmi.MaxName: the longest instance name.
const maxName = 31

// CheckHost tells whether h can be a monitored host: an IP address or a
// host name (letters, digits, '-', '_', labels separated by dots, at
// most 253 bytes).
func CheckHost(h string) error {
	if _, err := netip.ParseAddr(h); err == nil {
		return nil
	}
	if h == "" {
		return fmt.Errorf("host name is empty")
	}
	if len(h) > 253 {
		return fmt.Errorf("host name %.40q... is %d bytes, at most 253 allowed", h, len(h))
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("host name %q: labels between dots must have 1 to 63 characters", h)
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return fmt.Errorf("host name %q contains %q; want an IP address or letters, digits, '-', '_' and dots", h, r)
			}
		}
	}
	return nil
}

// InstanceName is the name of a host's context under RTime/LAN: the host
// as written when it fits the 31 bytes of an instance name, else its first
// 26 bytes, '~' and four hex digits of a hash of the whole name, so that
// two long names that start alike stay apart.
func InstanceName(host string) string {
	if len(host) <= maxName {
		return host
	}
	f := fnv.New32a()
	f.Write([]byte(host))
	return fmt.Sprintf("%s~%04x", host[:maxName-5], f.Sum32()&0xffff)
}
