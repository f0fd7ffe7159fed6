package cpuset

import (
	"slices"
	"strings"
	"testing"
)

func TestListRoundTrip(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "3,1-2": "1-3", "0-1,4,6-7": "0-1,4,6-7", " 5 \n": "5", "": ""} {
		s, err := ParseList(in)
		if err != nil || s.String() != want {
			t.Errorf("ParseList(%q) = %v (%q), %v; want %q", in, s, s.String(), err, want)
		}
	}
	for _, bad := range []string{"a", "2-1", "-1", "1-x"} {
		if _, err := ParseList(bad); err == nil {
			t.Errorf("ParseList(%q): no error", bad)
		}
	}
}

func TestDefaultPlanSplits(t *testing.T) {
	p := DefaultPlan(Set{0, 1})
	if !slices.Equal(p.Clients, Set{0}) || !slices.Equal(p.Broker, Set{1}) || p.Off() {
		t.Errorf("2 CPUs: %+v", p)
	}
	p = DefaultPlan(Set{2, 3, 4, 5, 6})
	if !slices.Equal(p.Clients, Set{2, 3, 4}) || !slices.Equal(p.Broker, Set{5, 6}) {
		t.Errorf("5 CPUs: %+v", p)
	}
	if p := DefaultPlan(Set{0}); !p.Off() || p.Why == "" {
		t.Errorf("1 CPU: %+v", p)
	}
}

func TestParseFlag(t *testing.T) {
	all := Set{0, 1, 2, 3}
	p, err := ParseFlag("broker=1,clients=0", all)
	if err != nil || !slices.Equal(p.Broker, Set{1}) || !slices.Equal(p.Clients, Set{0}) {
		t.Errorf("broker=1,clients=0: %+v %v", p, err)
	}
	p, err = ParseFlag("clients=0-1,broker=2,3", all)
	if err != nil || !slices.Equal(p.Broker, Set{2, 3}) || !slices.Equal(p.Clients, Set{0, 1}) {
		t.Errorf("lists with commas: %+v %v", p, err)
	}
	if p, err := ParseFlag("off", all); err != nil || !p.Off() {
		t.Errorf("off: %+v %v", p, err)
	}
	if p, err := ParseFlag("", all); err != nil || p.Off() {
		t.Errorf("default: %+v %v", p, err)
	}
	for bad, says := range map[string]string{
		"broker=1":                     "clients missing",
		"broker=0-1,clients=1":         "in both sets",
		"broker=7,clients=0":           "not available",
		"brok=1,clients=0":             "unknown side",
		"1,clients=0":                  "want broker=LIST",
		"broker=1,clients=0,broker=2":  "given twice",
		"broker=,clients=0":            "empty",
		"broker=x,clients=0,broker=1-": "",
	} {
		if _, err := ParseFlag(bad, all); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseFlag(%q) = %v, want an error saying %q", bad, err, says)
		}
	}
}
