package netem

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltinProfiles(t *testing.T) {
	names := BuiltinProfiles()
	for _, want := range []string{"wireline", "wifi-paper", "wifi-bursty", "wifi-g"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("built-in %q missing from %v", want, names)
		}
	}
	for _, n := range names {
		p, err := LoadProfile(n)
		if err != nil {
			t.Errorf("built-in %s: %v", n, err)
			continue
		}
		if p.Name != n {
			t.Errorf("built-in file %s.yaml has name %q", n, p.Name)
		}
		if p.Description == "" {
			t.Errorf("built-in %s has no description", n)
		}
	}
}

func TestWifiPaperIsThePapersLink(t *testing.T) {
	p, err := LoadProfile("wifi-paper")
	if err != nil {
		t.Fatal(err)
	}
	want := Profile{Name: "wifi-paper", RateKbit: 1000, LossPct: 3, Duplex: DuplexHalf, QueueMs: 500}
	p.Description = ""
	if p != want {
		t.Fatalf("wifi-paper = %+v, want %+v", p, want)
	}
	if !p.Shaped() || len(p.NeedsNetem()) != 0 {
		t.Fatalf("wifi-paper must be shaped and runnable without netem: %v", p.NeedsNetem())
	}
	w, err := LoadProfile("wireline")
	if err != nil {
		t.Fatal(err)
	}
	if w.Shaped() {
		t.Fatalf("wireline must be unshaped: %+v", w)
	}
	b, err := LoadProfile("wifi-bursty")
	if err != nil {
		t.Fatal(err)
	}
	if need := b.NeedsNetem(); len(need) != 3 {
		t.Fatalf("wifi-bursty needs delay, jitter and correlation from netem, got %v", need)
	}
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadProfileFile(t *testing.T) {
	path := writeFile(t, "lossy.yaml", "rate_kbit: 2000\nloss_pct: 1.5\nduplex: full\n")
	p, err := LoadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "lossy" || p.RateKbit != 2000 || p.LossPct != 1.5 || p.Duplex != DuplexFull {
		t.Fatalf("got %+v", p)
	}
	if p.EffectiveQueueMs() != DefaultQueueMs {
		t.Fatalf("queue default: %v", p.EffectiveQueueMs())
	}
}

func TestLoadProfileErrors(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"unknown-field", "name: x\nrate_kbit: 10\nlos_pct: 3\n", ":3: unknown field \"los_pct\""},
		{"bad-number", "name: x\nloss_pct: lots\n", ":2: loss_pct: want a number"},
		{"out-of-range", "name: x\nduplex: full\nloss_pct: 130\n", ":3: loss_pct: 130 is out of range"},
		{"bad-duplex", "name: x\nduplex: simplex\n", ":2: duplex: \"simplex\" must be"},
		{"jitter-without-delay", "name: x\njitter_ms: 3\n", ":2: jitter_ms: needs delay_ms > 0"},
		{"corr-without-loss", "name: x\nloss_correlation_pct: 20\n", ":2: loss_correlation_pct: needs loss_pct > 0"},
		{"tiny-rate", "name: x\nrate_kbit: 1\n", ":2: rate_kbit: 1 is out of range"},
		{"twice", "name: x\nloss_pct: 1\nloss_pct: 2\n", ":3: field \"loss_pct\" given twice (first at line 2)"},
		{"list", "name: x\nloss_pct: [1, 2]\n", ":2: loss_pct: want a single value, got a list"},
		{"not-a-map", "- a\n- b\n", ":1: a profile must be a mapping"},
		{"syntax", "name: x\n  rate: : :\n", "yaml:"},
		{"name-number", "name: 12\n", ":1: name: want a string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, c.name+".yaml", c.body)
			_, err := LoadProfile(path)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrBadProfile) {
				t.Errorf("error does not wrap ErrBadProfile: %v", err)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not contain %q and the path", err, c.want)
			}
		})
	}
}

func TestLoadProfileUnknown(t *testing.T) {
	for _, name := range []string{"wifi-paperz", "/no/such/file.yaml", ""} {
		_, err := LoadProfile(name)
		if !errors.Is(err, ErrUnknownProfile) {
			t.Errorf("%q: want ErrUnknownProfile, got %v", name, err)
		}
	}
}

func TestSameLink(t *testing.T) {
	p, _ := LoadProfile("wifi-paper")
	q := p
	q.Name, q.Description, q.QueueMs = "copy", "", DefaultQueueMs
	if !p.SameLink(q) {
		t.Error("same impairments under another name must be the same link")
	}
	q.LossPct = 2
	if p.SameLink(q) {
		t.Error("different loss must differ")
	}
	w1, w2 := Profile{Name: "a", Duplex: DuplexFull}, Profile{Name: "b", Duplex: DuplexHalf}
	if !w1.SameLink(w2) {
		t.Error("two unshaped profiles are the same link")
	}
}
