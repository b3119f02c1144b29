package mib

import "strings"

// lineWidth is where descriptions wrap.
const lineWidth = 72

// clean makes s fit inside an SMI quoted string: printable ASCII only
// (RFC 2578 wants NVT ASCII), no double quotes (they end the string).
func clean(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteByte('\'')
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case r < ' ' || r > '~':
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// quoted renders text as a quoted string starting at column len(indent):
// paragraphs (split at "\n") wrapped at lineWidth, continuation lines
// aligned after the opening quote, an empty line between paragraphs.
func quoted(indent, text string) string {
	var b strings.Builder
	b.WriteString(indent + `"`)
	cont := indent + " "
	for i, para := range strings.Split(text, "\n") {
		if i > 0 {
			b.WriteString("\n\n" + cont)
		}
		col := len(cont)
		for j, w := range strings.Fields(clean(para)) {
			if j > 0 {
				if col+1+len(w) > lineWidth {
					b.WriteString("\n" + cont)
					col = len(cont)
				} else {
					b.WriteByte(' ')
					col++
				}
			}
			b.WriteString(w)
			col += len(w)
		}
	}
	b.WriteString(`"`)
	return b.String()
}
