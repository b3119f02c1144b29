package mib

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
)

// MaxDescriptor is the longest descriptor SMIv2 allows (RFC 2578 section 3.1).
const MaxDescriptor = 64

// symbolWords spell out the characters of SPMI names that carry meaning
// ("%free" is a percentage); every other non-alphanumeric character only
// separates words.
var symbolWords = map[rune]string{'%': "Pct", '#': "Num"}

// componentWord turns one path component into capitalized words run
// together: "%free" -> "PctFree", "rx_bytes" -> "RxBytes", "cpu0" ->
// "Cpu0". Letters other than ASCII are dropped; "" means nothing usable.
func componentWord(name string) string {
	var b strings.Builder
	start := true
	for _, r := range name {
		switch {
		case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			if start && r >= 'a' && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			start = false
		case symbolWords[r] != "":
			b.WriteString(symbolWords[r])
			start = true
		default:
			start = true
		}
	}
	return b.String()
}

// lowerLead lowercases the leading capitals of the first component as Go
// does with initialisms: "CPU" -> "cpu", "PagSp" -> "pagSp", "RTime" ->
// "rTime".
func lowerLead(w string) string {
	n := 0
	for n < len(w) && w[n] >= 'A' && w[n] <= 'Z' {
		n++
	}
	if n > 1 && n < len(w) && w[n] >= 'a' && w[n] <= 'z' {
		n-- // the last capital starts the next word
	}
	return strings.ToLower(w[:n]) + w[n:]
}

// plainDescriptor is the descriptor a path gives before length and
// collision rules: the components' words run together, the first one
// starting in lower case. A component without usable characters becomes
// "N" and its ASN.1 number.
func plainDescriptor(components []string, rel asn1tree.OID) string {
	var b strings.Builder
	for i, c := range components {
		w := componentWord(c)
		if w == "" {
			w = "N" + strconv.FormatUint(uint64(rel[i]), 10)
		}
		if i == 0 {
			w = lowerLead(w)
			if w[0] < 'a' || w[0] > 'z' {
				w = "n" + w
			}
		}
		b.WriteString(w)
	}
	return b.String()
}

// suffixed is the form a descriptor takes when its plain form is too long
// or not unique: cut to fit, then "R" and the relative id with "x" between
// the arcs (memRealPctFree at 2.1.3 -> memRealPctFreeR2x1x3). extra
// appends "Z"s in the unlikely case that this form is taken too. It fails
// when the suffix leaves no room for the plain form's first letter.
func suffixed(plain string, rel asn1tree.OID, extra int) (string, error) {
	parts := make([]string, len(rel))
	for i, a := range rel {
		parts[i] = strconv.FormatUint(uint64(a), 10)
	}
	sfx := "R" + strings.Join(parts, "x") + strings.Repeat("Z", extra)
	keep := MaxDescriptor - len(sfx)
	if keep < 1 {
		return "", fmt.Errorf("its suffix %s is %d characters, and a descriptor has at most %d", sfx, len(sfx), MaxDescriptor)
	}
	return plain[:min(keep, len(plain))] + sfx, nil
}

// validDescriptor checks the SMIv2 rules for descriptors.
func validDescriptor(s string) error {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return fmt.Errorf("descriptor %q must start with a lowercase letter", s)
	}
	if len(s) > MaxDescriptor {
		return fmt.Errorf("descriptor %q is longer than %d characters", s, MaxDescriptor)
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Errorf("descriptor %q contains %q; only letters and digits are allowed", s, r)
		}
	}
	return nil
}

// ValidModuleName checks a module name against RFC 2578 section 3: an
// uppercase letter, then letters, digits and single hyphens, no hyphen at
// the end, at most 64 characters.
func ValidModuleName(s string) error {
	bad := func(why string) error { return fmt.Errorf("module name %q: %s", s, why) }
	switch {
	case s == "" || s[0] < 'A' || s[0] > 'Z':
		return bad("must start with an uppercase letter")
	case len(s) > MaxDescriptor:
		return bad("is longer than 64 characters")
	case strings.HasSuffix(s, "-") || strings.Contains(s, "--"):
		return bad("must not end in a hyphen or contain two in a row")
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return bad(fmt.Sprintf("contains %q", r))
		}
	}
	return nil
}

// modulePrefix derives the prefix of the module's own descriptors from its
// name: "SUBAGENT-MIB" -> "subagent", "ACME-PERF-MIB" -> "acmePerf".
func modulePrefix(module string) string {
	words := strings.Split(strings.TrimSuffix(module, "-MIB"), "-")
	var b strings.Builder
	for i, w := range words {
		if w == "" {
			continue
		}
		if strings.ToUpper(w) == w {
			w = w[:1] + strings.ToLower(w[1:])
		}
		if i == 0 {
			w = lowerLead(w)
		} else {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
	}
	return b.String()
}
