package all_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/brokers"
	"pslab/internal/driver"
	"pslab/internal/mqtt"
	"pslab/internal/scenario"
)

// The table of docs/mqtt.md that says, for each of the 50 cases of the
// Gaddah & Kunz sets, what it means on every MQTT broker or why it is
// refused, is made from the registry: TestMQTTCaseTableIsCurrent fails
// when the doc and the brokers' Supports differ (PSLAB_UPDATE_DOCS=1
// rewrites it).

const (
	tableBegin = "<!-- mqtt-cases:begin (made by TestMQTTCaseTableIsCurrent) -->"
	tableEnd   = "<!-- mqtt-cases:end -->"
)

// mqttBrokers are the registered brokers reached over MQTT.
func mqttBrokers() []string {
	var out []string
	for _, n := range brokers.Names() {
		d, _ := brokers.Lookup(n)
		if slices.Contains(d.Schemes, "mqtt") {
			out = append(out, n)
		}
	}
	return out
}

func mqttCaseTable(t *testing.T) string {
	names := mqttBrokers()
	require.NotEmpty(t, names)
	var b strings.Builder
	fmt.Fprintf(&b, "| set | case | factors | QoS, session | %s |\n", strings.Join(names, " | "))
	fmt.Fprintf(&b, "|---|---|---|---|%s\n", strings.Repeat("---|", len(names)))
	reasons := map[string]int{}
	var order []string
	for _, file := range []string{"gaddah-kunz-set1.yaml", "gaddah-kunz-set2.yaml"} {
		s, err := scenario.Load(filepath.Join("..", "..", "..", "scenarios", file), scenario.Options{})
		require.NoError(t, err)
		for _, c := range s.Cases {
			f := c.Factors
			session := "clean"
			if f.Subscription == scenario.Durable {
				session = "persistent"
			}
			sel := ""
			if f.Selector {
				sel = ", selector"
			}
			fmt.Fprintf(&b, "| %s | %s | %d/%d/%d %s/%s/%s %s %d B%s | %d, %s |", strings.TrimPrefix(s.Name, "gaddah-kunz-"), c.ID,
				f.Publishers, f.Subscribers, f.Topics, f.Subscription, f.Delivery, f.Ack, f.Body, f.Size, sel, mqtt.QoS(f), session)
			for _, n := range names {
				d, _ := brokers.Lookup(n)
				err := d.Supports(f)
				switch {
				case err == nil:
					b.WriteString(" runs |")
				case errors.Is(err, driver.ErrUnsupported):
					why := strings.TrimSuffix(err.Error(), ": "+driver.ErrUnsupported.Error())
					why = why[strings.Index(why, ": ")+2:] // without "<broker> over <version>"
					if _, ok := reasons[why]; !ok {
						order = append(order, why)
						reasons[why] = len(order)
					}
					fmt.Fprintf(&b, " refused (%d) |", reasons[why])
				default:
					t.Fatalf("%s case %s on %s: %v", file, c.ID, n, err)
				}
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\nRefused because:\n\n")
	for i, why := range order {
		fmt.Fprintf(&b, "%d. %s\n", i+1, why)
	}
	return b.String()
}

func TestMQTTCaseTableIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", "..", "docs", "mqtt.md")
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	text := string(doc)
	i, j := strings.Index(text, tableBegin), strings.Index(text, tableEnd)
	require.True(t, i >= 0 && j > i, "docs/mqtt.md has no table markers")
	want := tableBegin + "\n" + mqttCaseTable(t) + tableEnd
	got := text[i : j+len(tableEnd)]
	if os.Getenv("PSLAB_UPDATE_DOCS") == "1" {
		require.NoError(t, os.WriteFile(path, []byte(text[:i]+want+text[j+len(tableEnd):]), 0o644))
		return
	}
	assert.Equal(t, want, got, "docs/mqtt.md's case table is stale: PSLAB_UPDATE_DOCS=1 go test ./internal/brokers/all -run TestMQTTCaseTableIsCurrent")
}
