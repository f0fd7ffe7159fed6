package record

import (
	"encoding/json"
	"testing"
)

// TestLateKeysStripOnlyWhatWasMissing: the keys a JSON object lacked are
// left out when it is written again, wherever they are (first, middle,
// last, several together), and nothing else changes, strings holding
// braces and commas included.
func TestLateKeysStripOnlyWhatWasMissing(t *testing.T) {
	keys := []string{"a", "b", "c"}
	for _, c := range []struct{ read, full, want string }{
		{`{"x":1,"y":"},{"}`, `{"a":0,"x":1,"b":0,"y":"},{","c":0}`, `{"x":1,"y":"},{"}`},
		{`{"a":2,"x":[1,{"b":3}]}`, `{"a":2,"x":[1,{"b":3}],"b":0,"c":0}`, `{"a":2,"x":[1,{"b":3}]}`},
		{`{"x":1,"c":5}`, `{"x":1,"a":0,"b":0,"c":5}`, `{"x":1,"c":5}`},
		{`{"a":1,"b":2,"c":3}`, `{"a":1,"b":2,"c":3}`, `{"a":1,"b":2,"c":3}`},
		{`{}`, `{"a":0,"b":0}`, `{}`},
	} {
		var l LateKeys
		if err := l.Read([]byte(c.read), keys...); err != nil {
			t.Fatal(err)
		}
		got, err := l.Strip([]byte(c.full), keys...)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("read %s, wrote %s: got %s, want %s", c.read, c.full, got, c.want)
		}
		if !json.Valid(got) {
			t.Errorf("%s is not JSON", got)
		}
	}
}

// TestDrainWithoutFlushKeepsItsShape: an old drain block (no flush_s)
// writes back without one; a new one with flush_s 0 keeps it.
func TestDrainWithoutFlushKeepsItsShape(t *testing.T) {
	for _, in := range []string{
		`{"s":1.5,"ended":"complete","stall_s":2,"bound_s":65}`,
		`{"s":1.5,"ended":"complete","stall_s":2,"bound_s":65,"flush_s":0}`,
	} {
		var d Drain
		if err := json.Unmarshal([]byte(in), &d); err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != in {
			t.Errorf("read %s, wrote %s", in, out)
		}
	}
}
