package driver

import (
	"fmt"

	"pslab/internal/scenario"
)

// ShapeRefusal says why no broker can run f, "" when one can: a value
// outside the scenario's vocabulary (subscription, delivery, body type) or
// a shape no case can have (no topic or publisher, a negative size). The
// drivers' Supports ask it first, then refuse what their protocol cannot
// express.
func ShapeRefusal(f scenario.Factors) string {
	switch f.Subscription {
	case scenario.Durable, scenario.NonDurable:
	default:
		return fmt.Sprintf("no mapping for subscription %q", f.Subscription)
	}
	switch f.Delivery {
	case scenario.Persistent, scenario.NonPersistent:
	default:
		return fmt.Sprintf("no mapping for delivery %q", f.Delivery)
	}
	switch f.Body {
	case scenario.BodyBytes, scenario.BodyText, scenario.BodyMap, scenario.BodyStream, scenario.BodyObject:
	default:
		return fmt.Sprintf("no codec for body type %q", f.Body)
	}
	if f.Topics < 1 || f.Publishers < 1 || f.Subscribers < 0 {
		return fmt.Sprintf("need at least one topic and one publisher (got %d topics, %d publishers, %d subscribers)",
			f.Topics, f.Publishers, f.Subscribers)
	}
	if f.Size < 0 {
		return fmt.Sprintf("negative body size %d", f.Size)
	}
	return ""
}
