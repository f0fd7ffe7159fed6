package mqtt

import "testing"

func TestRunningFindsTheBrokerServingAURLUntilItIsRemoved(t *testing.T) {
	type broker struct{ name string }
	var r Running[*broker]
	if b := r.Lookup("mqtt://127.0.0.1:1883"); b != nil {
		t.Fatalf("empty: found %v", b)
	}
	a, c := &broker{"a"}, &broker{"c"}
	r.Add("mqtt://127.0.0.1:1883", a)
	r.Add("mqtt://10.77.2.2:1883", c)
	if b := r.Lookup("mqtt://127.0.0.1:1883"); b != a {
		t.Fatalf("found %v, want a", b)
	}
	if b := r.Lookup("mqtt://10.77.2.2:1883"); b != c {
		t.Fatalf("found %v, want c", b)
	}
	r.Remove("mqtt://127.0.0.1:1883")
	if b := r.Lookup("mqtt://127.0.0.1:1883"); b != nil {
		t.Fatalf("removed: found %v", b)
	}
	if b := r.Lookup("mqtt://10.77.2.2:1883"); b != c {
		t.Fatalf("the other one: found %v, want c", b)
	}
}
