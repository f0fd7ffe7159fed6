package record

import (
	"encoding/json"
	"fmt"
)

// LateKeys remembers which keys of a JSON object, added to the schema
// after records were committed without them, the object it was read from
// lacked, so that writing a record back leaves them out instead of
// inventing a zero (an old record never measured the machine's CPU; a 0
// there would say nothing else ran). Bit i stands for the i-th key of the
// list the type passes to Read and Strip. The zero value: every key was
// there (what pslab writes now).
type LateKeys uint8

// UnmarshalLate decodes data into v (a pointer to a type with no
// UnmarshalJSON of its own: the caller's type converted) and notes in
// late which of keys data lacks. For a type's UnmarshalJSON.
func UnmarshalLate(data []byte, v any, late *LateKeys, keys ...string) error {
	if err := json.Unmarshal(data, v); err != nil {
		return err
	}
	return late.Read(data, keys...)
}

// MarshalLate encodes v (a type with no MarshalJSON of its own) and
// leaves out the keys late says its JSON lacked. For a type's
// MarshalJSON.
func MarshalLate(v any, late LateKeys, keys ...string) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return late.Strip(data, keys...)
}

// Read notes which of keys (at most 8) data, a JSON object, lacks at its
// top level.
func (l *LateKeys) Read(data []byte, keys ...string) error {
	*l = 0
	present, err := topLevelKeys(data)
	if err != nil {
		return err
	}
	for i, k := range keys {
		if _, ok := present[k]; !ok {
			*l |= 1 << i
		}
	}
	return nil
}

// Strip removes from data, a compact JSON object as encoding/json writes
// it, the keys of keys that Read found missing.
func (l LateKeys) Strip(data []byte, keys ...string) ([]byte, error) {
	if l == 0 {
		return data, nil
	}
	present, err := topLevelKeys(data)
	if err != nil {
		return nil, err
	}
	var drop []span
	for i, k := range keys {
		if l&(1<<i) != 0 {
			if s, ok := present[k]; ok {
				drop = append(drop, s)
			}
		}
	}
	drop = sortSpans(drop)
	// Adjacent members go as one; one that ends the object takes the comma
	// before it with it (its own value had none after it).
	var merged []span
	for _, s := range drop {
		if n := len(merged); n > 0 && s.from <= merged[n-1].to {
			merged[n-1].to = max(merged[n-1].to, s.to)
			continue
		}
		merged = append(merged, s)
	}
	for i, s := range merged {
		if e := skipSpace(data, s.to); e < len(data) && data[e] == '}' {
			if j := lastNonSpace(data, s.from); j >= 0 && data[j] == ',' {
				merged[i].from = j
			}
		}
	}
	out := make([]byte, 0, len(data))
	at := 0
	for _, s := range merged {
		out = append(out, data[at:s.from]...)
		at = s.to
	}
	return append(out, data[at:]...), nil
}

// span is a member of an object: from its key's opening quote to past the
// comma that follows its value, or past the value for the last member.
type span struct{ from, to int }

// lastNonSpace is the index of the last byte before i that is not space,
// -1 if none.
func lastNonSpace(data []byte, i int) int {
	for i--; i >= 0; i-- {
		if c := data[i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
	}
	return -1
}

func sortSpans(s []span) []span {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].from < s[j-1].from; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// topLevelKeys finds the members of the JSON object data by key, without
// decoding the values.
func topLevelKeys(data []byte) (map[string]span, error) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	out := map[string]span{}
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] != '}' {
		from := i
		end, err := skipString(data, i)
		if err != nil {
			return nil, err
		}
		key := string(data[i+1 : end-1])
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, fmt.Errorf("no ':' after key %q", key)
		}
		if i, err = skipValue(data, skipSpace(data, i+1)); err != nil {
			return nil, err
		}
		i = skipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
		out[key] = span{from, i}
	}
	if i >= len(data) {
		return nil, fmt.Errorf("unterminated JSON object")
	}
	return out, nil
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index past the string starting at data[i].
func skipString(data []byte, i int) (int, error) {
	if i >= len(data) || data[i] != '"' {
		return 0, fmt.Errorf("want a string at byte %d", i)
	}
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated string")
}

// skipValue returns the index past the value starting at data[i].
func skipValue(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, fmt.Errorf("missing value")
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				end, err := skipString(data, i)
				if err != nil {
					return 0, err
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("unterminated value")
	}
	for ; i < len(data); i++ {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i, nil
		}
	}
	return i, nil
}
