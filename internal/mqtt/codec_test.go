package mqtt

import (
	"bufio"
	"bytes"
	"testing"

	paho5 "github.com/eclipse/paho.golang/packets"
	paho3 "github.com/eclipse/paho.mqtt.golang/packets"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The hot-path encoders against both Paho codecs, and back.

func TestPublishEncodingReadsBackInPaho(t *testing.T) {
	payload := bytes.Repeat([]byte{0xa5}, 300) // a two-byte remaining length
	for _, qos := range []byte{0, 1, 2} {
		for _, dup := range []bool{false, true} {
			b := append(publishHeader(nil, V311, "p1234567/t3", qos, dup, 4242, len(payload)), payload...)
			p3, err := paho3.ReadPacket(bytes.NewReader(b))
			require.NoError(t, err)
			pp := p3.(*paho3.PublishPacket)
			assert.Equal(t, "p1234567/t3", pp.TopicName)
			assert.Equal(t, qos, pp.Qos)
			assert.Equal(t, dup, pp.Dup)
			assert.Equal(t, payload, pp.Payload)
			if qos > 0 {
				assert.EqualValues(t, 4242, pp.MessageID)
			}

			b = append(publishHeader(nil, V5, "p1234567/t3", qos, dup, 4242, len(payload)), payload...)
			p5, err := paho5.ReadPacket(bytes.NewReader(b))
			require.NoError(t, err)
			pub := p5.Content.(*paho5.Publish)
			assert.Equal(t, "p1234567/t3", pub.Topic)
			assert.Equal(t, qos, pub.QoS)
			assert.Equal(t, dup, pub.Duplicate)
			assert.Equal(t, payload, pub.Payload)
			if qos > 0 {
				assert.EqualValues(t, 4242, pub.PacketID)
			}
		}
	}
}

func TestAckEncodingReadsBackInPaho(t *testing.T) {
	for _, typ := range []byte{pktPuback, pktPubrec, pktPubrel, pktPubcomp} {
		b := appendAck(nil, typ, 513)
		p3, err := paho3.ReadPacket(bytes.NewReader(b))
		require.NoError(t, err, pktNames[typ])
		assert.EqualValues(t, 513, p3.Details().MessageID, pktNames[typ])
		p5, err := paho5.ReadPacket(bytes.NewReader(b))
		require.NoError(t, err, pktNames[typ])
		assert.EqualValues(t, 513, p5.PacketID(), pktNames[typ])
	}
}

// TestDecodeWhatPahoWrites: PUBLISHes and acknowledgements written by the
// Paho codecs (with MQTT 5 properties and reason codes) decode here.
func TestDecodeWhatPahoWrites(t *testing.T) {
	var buf bytes.Buffer
	p3 := paho3.NewControlPacket(paho3.Publish).(*paho3.PublishPacket)
	p3.TopicName, p3.Qos, p3.Dup, p3.MessageID, p3.Payload = "a/b", 1, true, 7, []byte("hello")
	require.NoError(t, p3.Write(&buf))
	u, _ := paho5.NewControlPacket(paho5.PUBLISH).Content.(*paho5.Publish)
	u.Topic, u.QoS, u.PacketID, u.Payload = "c/d", 2, 9, []byte("world")
	u.Properties = &paho5.Properties{User: []paho5.User{{Key: "k", Value: "v"}}}
	var b5 bytes.Buffer
	_, err := u.WriteTo(&b5)
	require.NoError(t, err)
	pa := &paho5.Puback{PacketID: 11, ReasonCode: 0x10, Properties: &paho5.Properties{}}
	_, err = pa.WriteTo(&b5)
	require.NoError(t, err)

	r := &packetReader{br: bufio.NewReader(&buf)}
	pk, err := r.next()
	require.NoError(t, err)
	m, err := decodePublish(V311, pk.flags, pk.body)
	require.NoError(t, err)
	assert.Equal(t, "a/b", string(m.topic))
	assert.Equal(t, publish{qos: 1, dup: true, id: 7, topic: m.topic, payload: []byte("hello")}, m)

	r = &packetReader{br: bufio.NewReader(&b5)}
	pk, err = r.next()
	require.NoError(t, err)
	m, err = decodePublish(V5, pk.flags, pk.body)
	require.NoError(t, err)
	assert.Equal(t, "c/d", string(m.topic))
	assert.Equal(t, "world", string(m.payload), "the user property is skipped")
	assert.EqualValues(t, 9, m.id)
	pk, err = r.next()
	require.NoError(t, err)
	a, err := decodeAck(pk.typ, pk.body)
	require.NoError(t, err)
	assert.Equal(t, ack{id: 11, reason: 0x10}, a)
}

func TestVarintAndLongPackets(t *testing.T) {
	for _, n := range []int{0, 127, 128, 16383, 16384, 2097151, 2097152, maxRemaining} {
		b := appendVarint(nil, n)
		assert.Len(t, b, varintLen(n), n)
		got, err := readVarint(bytes.NewReader(b))
		require.NoError(t, err)
		assert.Equal(t, n, got)
	}
	_, err := readVarint(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff, 0x01}))
	assert.ErrorIs(t, err, errMalformed)

	// A packet longer than the reader's buffer comes whole.
	big := bytes.Repeat([]byte{1}, 100_000)
	pkt := append(publishHeader(nil, V311, "t", 0, false, 0, len(big)), big...)
	r := &packetReader{br: bufio.NewReaderSize(bytes.NewReader(append(pkt, pingreq...)), 4096)}
	pk, err := r.next()
	require.NoError(t, err)
	m, err := decodePublish(V311, pk.flags, pk.body)
	require.NoError(t, err)
	assert.Equal(t, big, m.payload)
	pk, err = r.next()
	require.NoError(t, err)
	assert.EqualValues(t, pktPingreq, pk.typ)
}

func TestMalformedPacketsAreRefused(t *testing.T) {
	for name, body := range map[string][]byte{
		"short":        {0},
		"topic beyond": {0, 9, 'a'},
	} {
		_, err := decodePublish(V311, 0, body)
		assert.ErrorIs(t, err, errMalformed, name)
	}
	_, err := decodePublish(V311, 0x06, []byte{0, 1, 'a', 0, 1}) // QoS 3
	assert.ErrorIs(t, err, errMalformed)
	_, err = decodePublish(V311, 0x02, []byte{0, 1, 'a'}) // QoS 1 without identifier
	assert.ErrorIs(t, err, errMalformed)
	_, err = decodeAck(pktPuback, []byte{1})
	assert.ErrorIs(t, err, errMalformed)
}

// TestControlPacketsRoundTrip: CONNECT and SUBSCRIBE as pslab writes them
// read back in Paho with what the mapping needs (clean session, expiry,
// QoS per filter).
func TestControlPacketsRoundTrip(t *testing.T) {
	b, err := connectPacket(V311, "pslab-x-c0", "pslab", "pw", false, 60, 0, 0)
	require.NoError(t, err)
	p, err := paho3.ReadPacket(bytes.NewReader(b))
	require.NoError(t, err)
	c := p.(*paho3.ConnectPacket)
	assert.Equal(t, "pslab-x-c0", c.ClientIdentifier)
	assert.False(t, c.CleanSession)
	assert.Equal(t, "pslab", c.Username)
	assert.EqualValues(t, 4, c.ProtocolVersion)

	b, err = connectPacket(V5, "pslab-x-c0", "pslab", "pw", false, 60, sessionExpiry, 1000)
	require.NoError(t, err)
	p5, err := paho5.ReadPacket(bytes.NewReader(b))
	require.NoError(t, err)
	c5 := p5.Content.(*paho5.Connect)
	assert.False(t, c5.CleanStart)
	require.NotNil(t, c5.Properties.SessionExpiryInterval)
	assert.EqualValues(t, sessionExpiry, *c5.Properties.SessionExpiryInterval)
	assert.EqualValues(t, 1000, *c5.Properties.ReceiveMaximum)

	b, err = subscribePacket(V311, 1, []string{"r/t0/s1", "r/t0/s2"}, 2)
	require.NoError(t, err)
	p, err = paho3.ReadPacket(bytes.NewReader(b))
	require.NoError(t, err)
	s := p.(*paho3.SubscribePacket)
	assert.Equal(t, []string{"r/t0/s1", "r/t0/s2"}, s.Topics)
	assert.Equal(t, []byte{2, 2}, s.Qoss)
}
