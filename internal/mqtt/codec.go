package mqtt

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	paho5 "github.com/eclipse/paho.golang/packets"
	paho3 "github.com/eclipse/paho.mqtt.golang/packets"
)

// The wire format. The packets of the hot path (PUBLISH, PUBACK, PUBREC,
// PUBREL, PUBCOMP, PINGREQ, PINGRESP) are encoded and decoded here, into
// reused buffers; the control packets of connection set-up (CONNECT,
// CONNACK, SUBSCRIBE, SUBACK, UNSUBSCRIBE, UNSUBACK, DISCONNECT) by the
// Eclipse Paho codecs: paho.mqtt.golang's packets for MQTT 3.1.1 and
// paho.golang's packets for MQTT 5 (their properties). Tests check the
// hot-path encoders against both codecs.

// Version is the MQTT protocol level of CONNECT.
type Version byte

// Protocol levels.
const (
	V311 Version = 4 // MQTT 3.1.1
	V5   Version = 5 // MQTT 5.0
)

func (v Version) String() string {
	switch v {
	case V311:
		return "MQTT 3.1.1"
	case V5:
		return "MQTT 5"
	}
	return fmt.Sprintf("MQTT protocol level %d", byte(v))
}

// Packet types (the high nibble of the first byte).
const (
	pktConnect     = 1
	pktConnack     = 2
	pktPublish     = 3
	pktPuback      = 4
	pktPubrec      = 5
	pktPubrel      = 6
	pktPubcomp     = 7
	pktSubscribe   = 8
	pktSuback      = 9
	pktUnsubscribe = 10
	pktUnsuback    = 11
	pktPingreq     = 12
	pktPingresp    = 13
	pktDisconnect  = 14
	pktAuth        = 15
)

var pktNames = [16]string{"reserved", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL",
	"PUBCOMP", "SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ", "PINGRESP", "DISCONNECT", "AUTH"}

// maxRemaining is the largest remaining length MQTT can express
// (four bytes of variable byte integer).
const maxRemaining = 268_435_455

// errMalformed marks a packet that does not parse.
var errMalformed = errors.New("malformed MQTT packet")

// appendVarint appends n as an MQTT variable byte integer.
func appendVarint(b []byte, n int) []byte {
	for {
		d := byte(n % 128)
		n /= 128
		if n > 0 {
			d |= 0x80
		}
		b = append(b, d)
		if n == 0 {
			return b
		}
	}
}

// varintLen is the length of n as a variable byte integer.
func varintLen(n int) int {
	switch {
	case n < 128:
		return 1
	case n < 16384:
		return 2
	case n < 2097152:
		return 3
	}
	return 4
}

// publishHeader appends the fixed header, topic, packet identifier (QoS
// > 0) and, for MQTT 5, an empty property list of a PUBLISH whose payload
// has n bytes. The payload follows.
func publishHeader(b []byte, v Version, topic string, qos byte, dup bool, id uint16, n int) []byte {
	rem := 2 + len(topic) + n
	if qos > 0 {
		rem += 2
	}
	if v == V5 {
		rem++ // property length 0
	}
	first := byte(pktPublish<<4) | qos<<1
	if dup {
		first |= 0x08
	}
	b = append(b, first)
	b = appendVarint(b, rem)
	b = binary.BigEndian.AppendUint16(b, uint16(len(topic)))
	b = append(b, topic...)
	if qos > 0 {
		b = binary.BigEndian.AppendUint16(b, id)
	}
	if v == V5 {
		b = append(b, 0)
	}
	return b
}

// appendAck appends a PUBACK, PUBREC, PUBREL or PUBCOMP for id: two bytes
// of identifier (in MQTT 5, a remaining length of 2 means reason code 0,
// success).
func appendAck(b []byte, typ byte, id uint16) []byte {
	first := typ << 4
	if typ == pktPubrel {
		first |= 0x02 // fixed flags of PUBREL
	}
	return append(b, first, 2, byte(id>>8), byte(id))
}

var pingreq = []byte{pktPingreq << 4, 0}

// packetReader reads whole packets from a buffered stream. A packet's body
// is a slice of the reader's buffer when it fits (valid until the next
// call), else of a buffer of its own.
type packetReader struct {
	br  *bufio.Reader
	big []byte
}

// packet is one received packet.
type packet struct {
	typ, flags byte
	body       []byte // the variable header and payload
}

// next reads the next packet.
func (r *packetReader) next() (packet, error) {
	first, err := r.br.ReadByte()
	if err != nil {
		return packet{}, err
	}
	n, err := readVarint(r.br)
	if err != nil {
		return packet{}, err
	}
	p := packet{typ: first >> 4, flags: first & 0x0f}
	if n == 0 {
		return p, nil
	}
	if n <= r.br.Size() {
		body, err := r.br.Peek(n)
		if err != nil {
			return packet{}, err
		}
		_, _ = r.br.Discard(n)
		p.body = body
		return p, nil
	}
	if cap(r.big) < n {
		r.big = make([]byte, n)
	}
	p.body = r.big[:n]
	_, err = io.ReadFull(r.br, p.body)
	return p, err
}

func readVarint(br io.ByteReader) (int, error) {
	n, mul := 0, 1
	for i := 0; i < 4; i++ {
		d, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		n += int(d&0x7f) * mul
		if d&0x80 == 0 {
			return n, nil
		}
		mul *= 128
	}
	return 0, fmt.Errorf("%w: remaining length longer than 4 bytes", errMalformed)
}

// publish is a decoded PUBLISH.
type publish struct {
	qos     byte
	dup     bool
	id      uint16
	topic   []byte
	payload []byte
}

// decodePublish decodes the body of a PUBLISH (flags from its first byte).
func decodePublish(v Version, flags byte, body []byte) (publish, error) {
	p := publish{qos: (flags >> 1) & 3, dup: flags&0x08 != 0}
	if p.qos == 3 || len(body) < 2 {
		return p, fmt.Errorf("%w: PUBLISH", errMalformed)
	}
	tl := int(binary.BigEndian.Uint16(body))
	i := 2 + tl
	if len(body) < i {
		return p, fmt.Errorf("%w: PUBLISH topic", errMalformed)
	}
	p.topic = body[2:i]
	if p.qos > 0 {
		if len(body) < i+2 {
			return p, fmt.Errorf("%w: PUBLISH packet identifier", errMalformed)
		}
		p.id = binary.BigEndian.Uint16(body[i:])
		i += 2
	}
	if v == V5 {
		pl, err := readVarint(bytes.NewReader(body[i:]))
		if err != nil {
			return p, fmt.Errorf("%w: PUBLISH properties", errMalformed)
		}
		i += varintLen(pl) + pl
		if len(body) < i {
			return p, fmt.Errorf("%w: PUBLISH properties", errMalformed)
		}
	}
	p.payload = body[i:]
	return p, nil
}

// ack is a decoded PUBACK, PUBREC, PUBREL or PUBCOMP.
type ack struct {
	id     uint16
	reason byte // MQTT 5 reason code; 0 (success) in 3.1.1
}

func decodeAck(typ byte, body []byte) (ack, error) {
	if len(body) < 2 {
		return ack{}, fmt.Errorf("%w: %s", errMalformed, pktNames[typ])
	}
	a := ack{id: binary.BigEndian.Uint16(body)}
	if len(body) > 2 {
		a.reason = body[2]
	}
	return a, nil
}

// connectPacket encodes CONNECT for version v.
func connectPacket(v Version, clientID, user, password string, clean bool, keepAlive uint16, sessionExpiry uint32, receiveMax uint16) ([]byte, error) {
	var buf bytes.Buffer
	if v == V5 {
		props := &paho5.Properties{}
		if receiveMax > 0 { // 0 is a protocol error: absent means 65535
			props.ReceiveMaximum = &receiveMax
		}
		if sessionExpiry > 0 {
			props.SessionExpiryInterval = &sessionExpiry
		}
		c := &paho5.Connect{ProtocolName: "MQTT", ProtocolVersion: 5, ClientID: clientID, CleanStart: clean,
			KeepAlive: keepAlive, Properties: props}
		if user != "" {
			c.UsernameFlag, c.Username = true, user
			c.PasswordFlag, c.Password = true, []byte(password)
		}
		_, err := c.WriteTo(&buf)
		return buf.Bytes(), err
	}
	c := paho3.NewControlPacket(paho3.Connect).(*paho3.ConnectPacket)
	c.ProtocolName, c.ProtocolVersion = "MQTT", 4
	c.ClientIdentifier, c.CleanSession, c.Keepalive = clientID, clean, keepAlive
	if user != "" {
		c.UsernameFlag, c.Username = true, user
		c.PasswordFlag, c.Password = true, []byte(password)
	}
	err := c.Write(&buf)
	return buf.Bytes(), err
}

// connack is a decoded CONNACK.
type connack struct {
	sessionPresent bool
	code           byte // 0: accepted
	reason         string
	receiveMax     uint16 // MQTT 5: the server's Receive Maximum (0: not given)
}

func decodeConnack(v Version, body []byte) (connack, error) {
	if v == V5 {
		c := &paho5.Connack{Properties: &paho5.Properties{}}
		if err := c.Unpack(bytes.NewBuffer(body)); err != nil {
			return connack{}, fmt.Errorf("%w: CONNACK: %v", errMalformed, err)
		}
		out := connack{sessionPresent: c.SessionPresent, code: c.ReasonCode, reason: c.Reason()}
		if c.Properties != nil && c.Properties.ReceiveMaximum != nil {
			out.receiveMax = *c.Properties.ReceiveMaximum
		}
		if c.Properties != nil && c.Properties.ReasonString != "" {
			out.reason += ": " + c.Properties.ReasonString
		}
		return out, nil
	}
	p, err := paho3.NewControlPacketWithHeader(paho3.FixedHeader{MessageType: paho3.Connack, RemainingLength: len(body)})
	if err != nil {
		return connack{}, err
	}
	if err := p.Unpack(bytes.NewReader(body)); err != nil {
		return connack{}, fmt.Errorf("%w: CONNACK: %v", errMalformed, err)
	}
	c := p.(*paho3.ConnackPacket)
	return connack{sessionPresent: c.SessionPresent, code: c.ReturnCode, reason: paho3.ConnackReturnCodes[c.ReturnCode]}, nil
}

// refusedLogin tells whether a CONNACK code means bad credentials
// (3.1.1: 4, 5; MQTT 5: 0x86 bad user name or password, 0x87 not
// authorized).
func refusedLogin(code byte) bool { return code == 4 || code == 5 || code == 0x86 || code == 0x87 }

// subscribePacket encodes SUBSCRIBE of filters at qos.
func subscribePacket(v Version, id uint16, filters []string, qos byte) ([]byte, error) {
	var buf bytes.Buffer
	if v == V5 {
		s := &paho5.Subscribe{PacketID: id, Properties: &paho5.Properties{}}
		for _, f := range filters {
			s.Subscriptions = append(s.Subscriptions, paho5.SubOptions{Topic: f, QoS: qos})
		}
		_, err := s.WriteTo(&buf)
		return buf.Bytes(), err
	}
	s := paho3.NewControlPacket(paho3.Subscribe).(*paho3.SubscribePacket)
	s.MessageID = id
	for _, f := range filters {
		s.Topics = append(s.Topics, f)
		s.Qoss = append(s.Qoss, qos)
	}
	err := s.Write(&buf)
	return buf.Bytes(), err
}

// decodeSuback returns the packet identifier and the granted QoS (or
// failure code: 0x80 and above) of each filter.
func decodeSuback(v Version, body []byte) (uint16, []byte, error) {
	if v == V5 {
		s := &paho5.Suback{Properties: &paho5.Properties{}}
		if err := s.Unpack(bytes.NewBuffer(body)); err != nil {
			return 0, nil, fmt.Errorf("%w: SUBACK: %v", errMalformed, err)
		}
		return s.PacketID, s.Reasons, nil
	}
	p, _ := paho3.NewControlPacketWithHeader(paho3.FixedHeader{MessageType: paho3.Suback, RemainingLength: len(body)})
	if err := p.Unpack(bytes.NewReader(body)); err != nil {
		return 0, nil, fmt.Errorf("%w: SUBACK: %v", errMalformed, err)
	}
	s := p.(*paho3.SubackPacket)
	return s.MessageID, s.ReturnCodes, nil
}

// unsubscribePacket encodes UNSUBSCRIBE of filters.
func unsubscribePacket(v Version, id uint16, filters []string) ([]byte, error) {
	var buf bytes.Buffer
	if v == V5 {
		u := &paho5.Unsubscribe{PacketID: id, Topics: filters, Properties: &paho5.Properties{}}
		_, err := u.WriteTo(&buf)
		return buf.Bytes(), err
	}
	u := paho3.NewControlPacket(paho3.Unsubscribe).(*paho3.UnsubscribePacket)
	u.MessageID, u.Topics = id, filters
	err := u.Write(&buf)
	return buf.Bytes(), err
}

// disconnectPacket encodes DISCONNECT (MQTT 5: reason 0, normal
// disconnection, which keeps a session whose expiry interval is not 0).
func disconnectPacket(v Version) []byte {
	if v == V5 {
		return []byte{pktDisconnect << 4, 1, 0}
	}
	return []byte{pktDisconnect << 4, 0}
}

// decodeDisconnect says why an MQTT 5 server disconnected us.
func decodeDisconnect(v Version, body []byte) string {
	if v != V5 || len(body) == 0 {
		return "DISCONNECT from the server"
	}
	d := &paho5.Disconnect{Properties: &paho5.Properties{}}
	if err := d.Unpack(bytes.NewBuffer(body)); err != nil {
		return fmt.Sprintf("DISCONNECT from the server (reason 0x%02x)", body[0])
	}
	s := fmt.Sprintf("DISCONNECT from the server: %s (0x%02x)", d.Reason(), d.ReasonCode)
	if d.Properties != nil && d.Properties.ReasonString != "" {
		s += ": " + d.Properties.ReasonString
	}
	return s
}
