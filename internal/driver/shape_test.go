package driver

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"pslab/internal/scenario"
)

// TestShapeRefusal: every case the scenario can write has a shape a broker
// can run; each value outside the vocabulary, and each impossible shape,
// is refused with what is wrong.
func TestShapeRefusal(t *testing.T) {
	ok := scenario.Defaults().Factors
	assert.Empty(t, ShapeRefusal(ok))
	for want, f := range map[string]func(*scenario.Factors){
		`subscription "shared"`: func(f *scenario.Factors) { f.Subscription = "shared" },
		`delivery "maybe"`:      func(f *scenario.Factors) { f.Delivery = "maybe" },
		`body type "xml"`:       func(f *scenario.Factors) { f.Body = "xml" },
		"0 topics":              func(f *scenario.Factors) { f.Topics = 0 },
		"0 publishers":          func(f *scenario.Factors) { f.Publishers = 0 },
		"-1 subscribers":        func(f *scenario.Factors) { f.Subscribers = -1 },
		"negative body size -1": func(f *scenario.Factors) { f.Size = -1 },
	} {
		g := ok
		f(&g)
		assert.Contains(t, ShapeRefusal(g), want)
	}
}
