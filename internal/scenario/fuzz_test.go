package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: any input either parses into valid cases or fails with errors
// that each carry the file name; it never panics.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../scenarios/*.yaml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(good))
	f.Add([]byte("suite: x\ncases:\n  - publishers: 3\n    topics: 9\n"))
	f.Add([]byte("suite: x\nsweep:\n  size: [1, 2]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, quick := range []bool{false, true} {
			s, err := Parse("fuzz.yaml", data, Options{Quick: quick})
			if err != nil {
				if s != nil {
					t.Fatalf("error with a suite: %v", err)
				}
				for _, line := range strings.Split(err.Error(), "\n") {
					if !strings.HasPrefix(line, "fuzz.yaml") {
						t.Fatalf("error line without file: %q", line)
					}
				}
				continue
			}
			for _, c := range s.Cases {
				if v := c.validate(); len(v) > 0 {
					t.Fatalf("accepted an invalid case: %v", v)
				}
				if (c.Topics > c.Publishers && !c.TopicRoundRobin) || c.Topics > c.Subscribers || c.Window <= 0 {
					t.Fatalf("accepted impossible counts: %+v", c.Factors)
				}
				if c.Filtered() && c.Subscribers != c.FilterSubscribers() {
					t.Fatalf("filter case with %d subscribers, its design has %d", c.Subscribers, c.FilterSubscribers())
				}
			}
		}
	})
}
