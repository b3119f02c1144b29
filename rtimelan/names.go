package rtimelan

import (
	"fmt"
	"hash/fnv"
	"net/netip"
	"strings"
)

// maxName is spmi.MaxName: the longest instance name.
const maxName = 31

// CanonicalHost is the one spelling of a host: an IP address in any form
// a user types ("::1", "[::1]", "0:0::1", "::ffff:127.0.0.1") becomes
// netip's canonical text ("::1", "127.0.0.1"), so that one host is one
// instance; a host name is returned as written.
func CanonicalHost(h string) string {
	h = strings.TrimSpace(h)
	lit := h
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		lit = h[1 : len(h)-1]
	}
	if a, err := netip.ParseAddr(lit); err == nil {
		return a.Unmap().String()
	}
	return h
}

// CanonicalPath rewrites the host element of a path under RTime/LAN to
// CanonicalHost, keeping the rest: "RTime/LAN/[::1]/resptime" is
// "RTime/LAN/::1/resptime". Other paths are returned unchanged.
func CanonicalPath(path string) string {
	const prefix = "RTime/LAN/"
	lead := len(path) - len(strings.TrimLeft(path, "/ "))
	rest, ok := strings.CutPrefix(path[lead:], prefix)
	if !ok {
		return path
	}
	// An IPv6 literal holds no '/', so the host ends at the next one.
	host, tail, slash := strings.Cut(rest, "/")
	c := CanonicalHost(host)
	if c == host || c == "" {
		return path
	}
	if slash {
		tail = "/" + tail
	}
	return path[:lead] + prefix + c + tail
}

// CheckHost tells whether h can be a monitored host: an IP address (also
// in brackets) or a host name (letters, digits, '-', '_', labels separated
// by dots, at most 253 bytes).
func CheckHost(h string) error {
	if isAddr(CanonicalHost(h)) {
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

func isAddr(h string) bool {
	_, err := netip.ParseAddr(h)
	return err == nil
}

// InstanceName is the name of a host's context under RTime/LAN: the
// canonical host (CanonicalHost) when it fits the 31 bytes of an instance
// name, else its first 26 bytes, '~' and four hex digits of a hash of the
// whole name, so that two long names that start alike stay apart.
func InstanceName(host string) string {
	host = CanonicalHost(host)
	if len(host) <= maxName {
		return host
	}
	f := fnv.New32a()
	f.Write([]byte(host))
	return fmt.Sprintf("%s~%04x", host[:maxName-5], f.Sum32()&0xffff)
}
