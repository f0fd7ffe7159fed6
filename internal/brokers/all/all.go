// Package all registers every broker pslab can run: import it for its
// side effect. A new broker is its own package under internal/brokers and
// one import line here.
package all

import (
	_ "pslab/internal/brokers/artemis"
	_ "pslab/internal/brokers/fake"
	_ "pslab/internal/brokers/mosquitto"
	_ "pslab/internal/brokers/nats"
)
