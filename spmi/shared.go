package spmi

import "fmt"

// shared is one source's read in this refresh.
type shared struct {
	val any
	err error
}

// Shared returns what read returns, calling it only the first time key is
// asked for in this refresh: providers that parse the same source
// (/proc/stat for CPU and Proc) share one read, so they also agree.
// Failures are shared too. key names the source, usually its path.
func Shared[T any](b *Builder, key string, read func() (T, error)) (T, error) {
	if m, ok := b.memo[key]; ok {
		v, ok := m.val.(T)
		if !ok && m.err == nil {
			return v, fmt.Errorf("spmi: source %s read as %T and as %T", key, m.val, v)
		}
		return v, m.err
	}
	v, err := read()
	if b.memo == nil {
		b.memo = map[string]shared{}
	}
	b.memo[key] = shared{val: v, err: err}
	return v, err
}
