package artemis

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	paho3 "github.com/eclipse/paho.mqtt.golang/packets"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"pslab/internal/driver"
	"pslab/internal/mqtt"
)

// rawMQTT is a bare MQTT 3.1.1 connection for looking at single packets
// (their DUP flags), beside pslab's client.
type rawMQTT struct {
	t  *testing.T
	nc net.Conn
}

// rawConnect connects under id (clean session or not) and returns the
// connection and the CONNACK's session present.
func rawConnect(t *testing.T, ep driver.Endpoint, id string, clean bool) (*rawMQTT, bool) {
	t.Helper()
	addr, err := mqtt.Addr(ep.URL)
	require.NoError(t, err)
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	c := &rawMQTT{t: t, nc: nc}
	cp := paho3.NewControlPacket(paho3.Connect).(*paho3.ConnectPacket)
	cp.ProtocolName, cp.ProtocolVersion = "MQTT", 4
	cp.ClientIdentifier, cp.CleanSession, cp.Keepalive = id, clean, 60
	cp.UsernameFlag, cp.Username, cp.PasswordFlag, cp.Password = true, ep.User, true, []byte(ep.Password)
	c.send(cp)
	ca, ok := c.read(10 * time.Second).(*paho3.ConnackPacket)
	require.True(t, ok, "CONNACK")
	require.Zero(t, ca.ReturnCode, "CONNACK return code")
	return c, ca.SessionPresent
}

func (c *rawMQTT) send(p paho3.ControlPacket) {
	c.t.Helper()
	require.NoError(c.t, p.Write(c.nc))
}

// read returns the next packet, or nil when none came within d.
func (c *rawMQTT) read(d time.Duration) paho3.ControlPacket {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(d))
	p, err := paho3.ReadPacket(c.nc)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return nil
	}
	require.NoError(c.t, err)
	return p
}

func (c *rawMQTT) puback(id uint16) {
	pa := paho3.NewControlPacket(paho3.Puback).(*paho3.PubackPacket)
	pa.MessageID = id
	c.send(pa)
}

// drop resets the connection (no DISCONNECT: the session stays, as after
// a crash or a lost link).
func (c *rawMQTT) drop() {
	if tc, ok := c.nc.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.nc.Close()
}

// TestMQTTQoS1RedeliveryToAResumedSessionAndItsDUPFlag settles whether
// Artemis sends the QoS 1 deliveries a persistent session had not
// acknowledged again when the session resumes, and with which DUP flag
// (MQTT 3.1.1 4.4 and 3.3.1.1: again, with DUP 1). A subscriber with a
// persistent session receives n messages, acknowledges the first acked of
// them, and its connection is reset; on the resumed session it counts what
// comes again and how much of it is flagged DUP. The counts are asserted
// as Artemis 2.44.0 gives them: every unacknowledged delivery again, none
// flagged DUP (docs/mqtt.md).
func TestMQTTQoS1RedeliveryToAResumedSessionAndItsDUPFlag(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, ep := startMQTTArtemis(t, ctx, "test-mqtt-dup", 256)
	const n, acked = 20, 5
	run := strconv.FormatInt(time.Now().UnixNano()%(1<<24), 36)
	topic, subID := "pslab-dup"+run+"/t0", "pslab-dup"+run+"-c0"

	sub, present := rawConnect(t, ep, subID, false)
	assert.False(t, present, "a new session")
	sp := paho3.NewControlPacket(paho3.Subscribe).(*paho3.SubscribePacket)
	sp.MessageID, sp.Topics, sp.Qoss = 1, []string{topic}, []byte{1}
	sub.send(sp)
	sa, ok := sub.read(10 * time.Second).(*paho3.SubackPacket)
	require.True(t, ok, "SUBACK")
	require.Equal(t, []byte{1}, sa.ReturnCodes)

	pub, _ := rawConnect(t, ep, "pslab-dup"+run+"-p0", true)
	for i := range n {
		pp := paho3.NewControlPacket(paho3.Publish).(*paho3.PublishPacket)
		pp.TopicName, pp.Qos, pp.MessageID, pp.Payload = topic, 1, uint16(i+1), []byte(fmt.Sprint(i))
		pub.send(pp)
	}
	for range n {
		_, ok := pub.read(10 * time.Second).(*paho3.PubackPacket)
		require.True(t, ok, "PUBACK for every publish")
	}
	pub.drop()

	// The first delivery of each: none is DUP. The first `acked` that
	// arrive are acknowledged; the rest are left unacknowledged.
	unacked := map[string]bool{}
	firstDup := 0
	for i := range n {
		pk, ok := sub.read(10 * time.Second).(*paho3.PublishPacket)
		require.True(t, ok, "delivery %d of %d", i+1, n)
		require.EqualValues(t, 1, pk.Qos)
		if pk.Dup {
			firstDup++
		}
		if i < acked {
			sub.puback(pk.MessageID)
		} else {
			unacked[string(pk.Payload)] = true
		}
	}
	assert.Zero(t, firstDup, "a first delivery is not DUP")
	// Nothing more comes on this connection (Artemis sends no delivery
	// again within a session).
	assert.Nil(t, sub.read(time.Second), "no delivery again on the same connection")
	sub.drop()

	again, present := rawConnect(t, ep, subID, false)
	assert.True(t, present, "the persistent session is resumed")
	var dup, plain, ackedAgain, unackedAgain int
	seen := map[string]bool{}
	for {
		// Wait long for what must come (a busy machine may delay it), then
		// a while for anything more (an acknowledged one sent again).
		wait := 2 * time.Second
		if unackedAgain < n-acked {
			wait = 20 * time.Second
		}
		pk := again.read(wait)
		if pk == nil {
			break
		}
		pp, ok := pk.(*paho3.PublishPacket)
		require.True(t, ok, "only PUBLISHes: %v", pk)
		again.puback(pp.MessageID)
		p := string(pp.Payload)
		assert.False(t, seen[p], "message %s twice on the resumed session", p)
		seen[p] = true
		if pp.Dup {
			dup++
		} else {
			plain++
		}
		if unacked[p] {
			unackedAgain++
		} else {
			ackedAgain++
		}
	}
	t.Logf("resumed session: %d of %d unacknowledged came again, %d acknowledged came again; %d with DUP, %d without", unackedAgain, n-acked, ackedAgain, dup, plain)
	// End the session (a clean session under its id).
	end, _ := rawConnect(t, ep, subID, true)
	end.send(paho3.NewControlPacket(paho3.Disconnect))
	end.drop()
	again.drop()

	assert.Equal(t, n-acked, unackedAgain, "every unacknowledged delivery comes again (MQTT 4.4)")
	assert.Zero(t, ackedAgain, "no acknowledged one comes again")
	assert.Equal(t, n-acked, dup+plain)
	// Artemis 2.44.0 sends them again without DUP (measured: 15 of 15,
	// in every run), though MQTT 3.1.1 asks for DUP 1 on a re-delivery
	// (3.3.1.1, 4.4): a subscriber cannot tell them from new messages,
	// and pslab counts such copies as duplicates not flagged redelivered.
	// Should this fail, Artemis flags them now: docs/mqtt.md says
	// otherwise.
	assert.Zero(t, dup, "Artemis 2.44.0 flags no re-delivery to a resumed session DUP")
}
