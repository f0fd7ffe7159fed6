package mqtt

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	paho5 "github.com/eclipse/paho.golang/packets"
	paho3 "github.com/eclipse/paho.mqtt.golang/packets"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/scenario"
)

func baseFactors() scenario.Factors {
	f := scenario.Defaults().Factors
	f.Publishers, f.Subscribers, f.Topics = 1, 1, 1
	return f
}

// TestMappingOfEveryCombination: each subscription x delivery x ack x
// body x selector either runs, with its mechanism saying what it meant,
// or is refused with the reason; never silently.
func TestMappingOfEveryCombination(t *testing.T) {
	p := testProfile()
	for _, sub := range scenario.Subscriptions {
		for _, del := range scenario.Deliveries {
			for _, ack := range scenario.AckModes {
				for _, body := range scenario.BodyTypes {
					for _, sel := range []bool{false, true} {
						f := baseFactors()
						f.Subscription, f.Delivery, f.Ack, f.Body, f.Selector = sub, del, ack, body, sel
						err := p.Supports(f)
						if del == scenario.NonPersistent && ack != scenario.AckAuto {
							require.Error(t, err, "%v", f)
							assert.True(t, errors.Is(err, driver.ErrUnsupported))
							assert.Contains(t, err.Error(), "QoS 0")
							continue
						}
						require.NoError(t, err, "%v", f)
						m := mechanism(p, f)
						q := QoS(f)
						if sub == scenario.Durable {
							assert.Contains(t, m, "persistent session: clean session off")
							assert.Contains(t, m, "durable_name has no MQTT expression")
						} else {
							assert.Contains(t, m, "non-durable = clean session")
						}
						switch q {
						case 0:
							assert.Contains(t, m, "QoS 0 publish and subscription")
							assert.Contains(t, m, "PINGREQ every window/4 sends")
						case 1:
							assert.Contains(t, m, "persistent = QoS 1 publish and subscription, with JetStream file storage")
							assert.Contains(t, m, "PUBACK")
						case 2:
							assert.Equal(t, scenario.AckExactlyOnce, ack)
							assert.Contains(t, m, "exactly-once = QoS 2")
						}
						if sel {
							assert.Contains(t, m, "no matching step")
						}
						if q == 0 && sub == scenario.Durable {
							assert.Contains(t, m, "QoS 0 while a durable subscriber is away: not kept")
						}
					}
				}
			}
		}
	}
}

func TestQoS(t *testing.T) {
	f := baseFactors()
	f.Delivery, f.Ack = scenario.NonPersistent, scenario.AckAuto
	assert.EqualValues(t, 0, QoS(f))
	f.Delivery = scenario.Persistent
	for _, a := range []scenario.AckMode{scenario.AckAuto, scenario.AckDupsOK, scenario.AckClient} {
		f.Ack = a
		assert.EqualValues(t, 1, QoS(f), a)
	}
	f.Ack = scenario.AckExactlyOnce
	assert.EqualValues(t, 2, QoS(f))
}

func TestRefusals(t *testing.T) {
	p := testProfile()
	f := baseFactors()
	f.Delivery, f.Ack = scenario.Persistent, scenario.AckExactlyOnce
	assert.NoError(t, p.Supports(f))
	p.QoS2Refusal = "the broker downgrades QoS 2"
	assert.ErrorContains(t, p.Supports(f), "the broker downgrades QoS 2")

	p = testProfile()
	for _, k := range []scenario.FilterKind{scenario.FilterProperty, scenario.FilterHeader} {
		g := baseFactors()
		g.Filter, g.FilterForm, g.Values, g.Matching = k, scenario.FormSimple, 2, 1
		assert.ErrorContains(t, p.Supports(g), "routes by topic only", k)
	}
	g := baseFactors()
	g.Filter, g.FilterForm, g.Values, g.Matching = scenario.FilterSubject, scenario.FormSimple, 2, 1
	assert.NoError(t, p.Supports(g))

	p.MaxPayload = 1 << 20
	f = baseFactors()
	f.Size = 2 << 20
	assert.ErrorContains(t, p.Supports(f), "above the broker's largest message")
	f.Ack = "transacted"
	assert.ErrorContains(t, p.Supports(f), "no MQTT mapping for ack mode")
}

// TestTopicsAndFilters: selector and subject-filter messages go to a
// topic per value, and a subscriber's filters cover exactly its values.
func TestTopicsAndFilters(t *testing.T) {
	f := baseFactors()
	cs := driver.CaseSpec{Prefix: "pslab-abc-c01", Factors: f}
	r := root(cs.Prefix)
	assert.Len(t, r, 8)
	assert.Equal(t, r+"/t0", topicName(cs.Prefix, f, 0, -1))
	assert.Equal(t, []string{r + "/t0"}, topicFilters(driver.SubSpec{Case: cs}))

	f.Selector = true
	cs.Factors = f
	assert.Equal(t, r+"/t1/s42", topicName(cs.Prefix, f, 1, 42))
	fs := topicFilters(driver.SubSpec{Case: cs, Topic: 1, SelectFrom: 40, SelectTo: 60})
	assert.Len(t, fs, 20)
	assert.Equal(t, r+"/t1/s40", fs[0])
	assert.Equal(t, r+"/t1/s59", fs[19])

	f = baseFactors()
	f.Filter, f.FilterForm, f.Values, f.Matching, f.OrValues = scenario.FilterSubject, scenario.FormOr, 10, 1, 3
	cs.Factors = f
	assert.Equal(t, r+"/t0/v7", topicName(cs.Prefix, f, 0, 7))
	assert.Equal(t, []string{r + "/t0/v1", r + "/t0/v4"}, topicFilters(driver.SubSpec{Case: cs, FilterValues: []int{1, 4}}))

	f.FilterForm, f.AndTerms, f.AndProperties, f.AndPosition = scenario.FormAnd, 2, 4, scenario.AndFirst
	cs.Factors = f
	topic := topicName(cs.Prefix, f, 0, 3)
	filters := topicFilters(driver.SubSpec{Case: cs, FilterValues: []int{3}})
	require.Len(t, filters, 1)
	assert.True(t, strings.HasSuffix(filters[0], "/#"), filters[0])
	assert.True(t, strings.HasPrefix(topic, strings.TrimSuffix(filters[0], "#")), "%s matches %s", filters[0], topic)
	assert.Equal(t, 4, strings.Count(strings.TrimPrefix(topic, r+"/t0"), "/"), "one level per property")
}

func TestClientIDsStartWithThePrefix(t *testing.T) {
	cs := driver.CaseSpec{Prefix: "pslab-abc-c01", Factors: baseFactors()}
	assert.Equal(t, "pslab-abc-c01-p3", pubClientID(driver.PubSpec{Case: cs, ID: 3}))
	assert.Equal(t, "pslab-abc-c01-s2", subClientID(driver.SubSpec{Case: cs, ID: 2, ClientID: "x"}), "non-durable: a fresh id")
	cs.Factors.Subscription = scenario.Durable
	assert.Equal(t, "pslab-abc-c01-c2", subClientID(driver.SubSpec{Case: cs, ID: 2, ClientID: "pslab-abc-c01-c2"}))
	assert.Equal(t, "pslab-abc-c01.mine", subClientID(driver.SubSpec{Case: cs, ID: 2, ClientID: "mine"}))
}

func TestWireBytes(t *testing.T) {
	f := baseFactors()
	f.Size = 100
	to, from := WireBytes(V311)("pslab-x-c01", f)
	// 1 type + 1 length + 2 + 11 topic "pXXXXXXX/t0" + 100 body; QoS 0: no identifier
	assert.Equal(t, 115, to)
	assert.Equal(t, to, from)
	f.Delivery = scenario.Persistent
	to, _ = WireBytes(V311)("pslab-x-c01", f)
	assert.Equal(t, 117, to, "QoS 1: a packet identifier")
	to, _ = WireBytes(V5)("pslab-x-c01", f)
	assert.Equal(t, 118, to, "MQTT 5: an empty property list")
}

// TestPublishOverhead: what a case's PUBLISH adds to its body (the link
// bound of pslab capacity counts it) is what Paho's codecs write around a
// payload of the case's size on the case's longest topic, over both
// versions: 15 bytes for 100 B at QoS 0 on MQTT 3.1.1 (fixed header 1,
// remaining length 1, topic length 2, topic "p1234567/t0" 11), 17 at QoS
// 1 (the packet identifier), 18 for 5120 B (a two-byte remaining length).
func TestPublishOverhead(t *testing.T) {
	type tc struct {
		name string
		set  func(*scenario.Factors)
		v311 int
	}
	for _, c := range []tc{
		{"100 B QoS 0", func(f *scenario.Factors) { f.Size, f.Delivery = 100, scenario.NonPersistent }, 15},
		{"100 B QoS 1", func(f *scenario.Factors) { f.Size, f.Delivery = 100, scenario.Persistent }, 17},
		{"5120 B QoS 1", func(f *scenario.Factors) { f.Size, f.Delivery = 5120, scenario.Persistent }, 18},
		{"100 B QoS 2", func(f *scenario.Factors) {
			f.Size, f.Delivery, f.Ack = 100, scenario.Persistent, scenario.AckExactlyOnce
		}, 17},
		{"2048 B QoS 1, selector, 10 topics", func(f *scenario.Factors) {
			f.Size, f.Delivery, f.Selector, f.Topics, f.Publishers, f.Subscribers = 2048, scenario.Persistent, true, 10, 10, 10
		}, 22},
	} {
		f := baseFactors()
		c.set(&f)
		val := -1
		if f.Selector {
			val = scenario.SelectorValues - 1
		}
		topic := topicName("pslab", f, f.Topics-1, val)
		payload := make([]byte, f.Size)
		qos := QoS(f)

		p3 := paho3.NewControlPacket(paho3.Publish).(*paho3.PublishPacket)
		p3.TopicName, p3.Qos, p3.Payload, p3.MessageID = topic, qos, payload, 7
		var b3 bytes.Buffer
		require.NoError(t, p3.Write(&b3))
		assert.Equal(t, b3.Len()-f.Size, PublishOverhead(V311)(f), "%s: MQTT 3.1.1", c.name)
		assert.Equal(t, c.v311, PublishOverhead(V311)(f), c.name)

		p5 := &paho5.Publish{Topic: topic, QoS: qos, Payload: payload, PacketID: 7, Properties: &paho5.Properties{}}
		var b5 bytes.Buffer
		_, err := p5.WriteTo(&b5)
		require.NoError(t, err)
		assert.Equal(t, b5.Len()-f.Size, PublishOverhead(V5)(f), "%s: MQTT 5", c.name)
	}
}
