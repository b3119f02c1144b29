package config

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// schema is the shape of Config by key: the type of every value and the
// keys of every section ("" is the top level).
type schema struct {
	types    map[string]reflect.Type
	sections map[string][]string
	lists    map[string]reflect.Type // lists of sections: the item type
}

var durationType = reflect.TypeOf(time.Duration(0))

func configSchema() schema {
	s := schema{types: map[string]reflect.Type{}, sections: map[string][]string{}, lists: map[string]reflect.Type{}}
	s.walk("", reflect.TypeOf(Config{}))
	return s
}

func (s schema) walk(prefix string, t reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := f.Tag.Get("mapstructure")
		if name == "" || name == "-" {
			continue
		}
		if name == ",squash" { // embedded: its keys are the section's
			s.walk(prefix, f.Type)
			continue
		}
		key := join(prefix, name)
		s.sections[prefix] = append(s.sections[prefix], name)
		if f.Type.Kind() == reflect.Struct && f.Type != durationType {
			s.walk(key, f.Type)
			continue
		}
		if f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct {
			s.lists[key] = f.Type.Elem() // a list of sections, checked item by item
		}
		s.types[key] = f.Type
	}
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// checkTree checks a configuration file's settings against the schema:
// unknown keys (with the keys allowed there and the nearest one), values
// where a section is due and the reverse, and the type of every value.
func (s schema) checkTree(prefix string, m map[string]any) []error {
	var errs []error
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		key, val := join(prefix, k), m[k]
		_, isSection := s.sections[key]
		switch t, isValue := s.types[key]; {
		case isSection:
			sub, ok := val.(map[string]any)
			if !ok && val != nil {
				errs = append(errs, fmt.Errorf("%s: %s is not a section; %s", key, show(val), s.allowed(key)))
				continue
			}
			errs = append(errs, s.checkTree(key, sub)...)
		case isValue:
			if err := checkValue(key, t, val); err != nil {
				errs = append(errs, err)
			} else if elem, ok := s.lists[key]; ok {
				errs = append(errs, checkList(key, elem, val)...)
			}
		default:
			errs = append(errs, s.unknown(prefix, k))
		}
	}
	return errs
}

// checkList checks each item of a list of sections as a section of its
// own, named key[i]: hotsets[0].maxresp.
func checkList(key string, elem reflect.Type, val any) []error {
	items, _ := val.([]any)
	var errs []error
	for i, it := range items {
		p := fmt.Sprintf("%s[%d]", key, i)
		m, ok := it.(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %s is not a section", p, show(it)))
			continue
		}
		sub := schema{types: map[string]reflect.Type{}, sections: map[string][]string{}, lists: map[string]reflect.Type{}}
		sub.walk(p, elem)
		errs = append(errs, sub.checkTree(p, m)...)
	}
	return errs
}

func (s schema) unknown(prefix, name string) error {
	msg := "unknown key " + join(prefix, name)
	if near := nearest(name, s.sections[prefix]); near != "" {
		msg += ": did you mean " + join(prefix, near) + "?"
	}
	return fmt.Errorf("%s (%s)", msg, s.allowed(prefix))
}

// allowed lists the keys of a section.
func (s schema) allowed(section string) string {
	where := section
	if where == "" {
		where = "the top level"
	}
	return where + " has " + strings.Join(s.sections[section], ", ")
}

// nearest is the candidate closest to name by edit distance, if it is
// close enough to be a typing error.
func nearest(name string, candidates []string) string {
	best, bestD := "", max(1, len(name)/3)+1
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// checkValue tells whether val (from YAML, the environment or a flag)
// decodes into a field of type t, and if not, what would.
func checkValue(key string, t reflect.Type, val any) error {
	if val == nil {
		return nil
	}
	bad := func(want string) error { return fmt.Errorf("%s: %s is not %s", key, show(val), want) }
	switch {
	case t == durationType:
		switch v := val.(type) {
		case string:
			if _, err := time.ParseDuration(strings.TrimSpace(v)); err != nil {
				return bad("a duration: write a number and a unit, as in 300ms, 1s, 2m or 1h")
			}
		case int, int64, uint64, float64:
			if !reflect.ValueOf(v).IsZero() {
				return bad("a duration: a number needs a unit, as in 300ms, 1s, 2m or 1h")
			}
		default:
			return bad("a duration (300ms, 1s, 2m or 1h)")
		}
	case t.Kind() == reflect.Int:
		if !wholeNumber(val) {
			return bad("a whole number")
		}
	case t.Kind() == reflect.String:
		switch val.(type) {
		case map[string]any, []any:
			return bad("a single value")
		}
	case t.Kind() == reflect.Slice:
		if _, ok := val.(map[string]any); ok {
			return bad("a list")
		}
	}
	return nil
}

func wholeNumber(val any) bool {
	switch v := val.(type) {
	case int, int64, uint64:
		return true
	case float64:
		return v == math.Trunc(v) && math.Abs(v) < 1<<53
	case string:
		_, err := strconv.Atoi(strings.TrimSpace(v))
		return err == nil
	}
	return false
}

func show(val any) string {
	if s, ok := val.(string); ok {
		return strconv.Quote(s)
	}
	if _, ok := val.(map[string]any); ok {
		return "a section"
	}
	if _, ok := val.([]any); ok {
		return "a list"
	}
	return fmt.Sprint(val)
}

// checkValues checks the effective value of every key (after the
// environment and flags) with get.
func (s schema) checkValues(get func(string) any) error {
	keys := make([]string, 0, len(s.types))
	for k := range s.types {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var errs []error
	for _, k := range keys {
		if err := checkValue(k, s.types[k], get(k)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
