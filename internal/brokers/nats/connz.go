package nats

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"pslab/internal/driver"
)

// What a core NATS server still holds for a case's subscribers: core NATS
// keeps no backlog, but while a subscriber's link is slower than what it
// is sent, the server queues the messages in that connection's output
// buffer (up to its max_pending, 64 MiB, after which it closes the
// connection as a slow consumer and they are lost). When a drain ends
// with messages still in those buffers, they are on their way, not lost.
// Past the output buffer, messages are still on their way in the kernels'
// socket buffers and on the link: coreHeld counts, per connection, what
// the server queued (out_msgs) less what the client parsed.

// connzPage is the part of a /connz answer coreHeld reads.
type connzPage struct {
	Total int         `json:"total"`
	Conns []connzConn `json:"connections"`
}

// connzConn is one connection of a /connz answer.
type connzConn struct {
	CID      uint64   `json:"cid"`
	Name     string   `json:"name"`
	InMsgs   int64    `json:"in_msgs"`
	Pending  int64    `json:"pending_bytes"`
	OutMsgs  int64    `json:"out_msgs"`
	OutBytes int64    `json:"out_bytes"`
	NumSubs  int      `json:"subscriptions"`
	Subs     []string `json:"subscriptions_list"`
	Reason   string   `json:"reason"` // why the server closed it (state=closed)
	// MQTTClient is the client id of an MQTT connection (nats-mqtt).
	MQTTClient string `json:"mqtt_client,omitempty"`
}

// connzPageSize is how many connections one /connz request asks for.
const connzPageSize = 1024

// subscriberConnName is the connection name of a case's subscriber: the
// case's subject root, so that Held finds the case's connections in connz.
func subscriberConnName(c driver.CaseSpec, id int) string {
	return fmt.Sprintf("%s%d", subscriberConnPrefix(c), id)
}

func subscriberConnPrefix(c driver.CaseSpec) string { return "pslab-sub-" + natsRoot(c.Prefix) + "-" }

// countReason adds one connection the server closed for reason (its
// connz reason, "unknown" when empty) to counts, made on first use so that
// a record without any stays without the field.
func countReason(counts map[string]int, reason string) map[string]int {
	if counts == nil {
		counts = map[string]int{}
	}
	counts[cmp.Or(reason, "unknown")]++
	return counts
}

// coreHeld asks the server's monitoring endpoint (ep.MonitorURL, over the
// admin dialer) what it queued for c's subscriber connections and takes
// away what each connection's client parsed (parsed, by connection name):
// the rest is on its way, in the server's output buffer, the kernels'
// socket buffers or on the link. For a connection parsed does not know,
// only its output buffer counts.
func coreHeld(ctx context.Context, ep driver.Endpoint, c driver.CaseSpec, parsed func(name string) (uint64, bool)) (driver.Held, error) {
	h := driver.Held{Source: "core NATS: the messages the server queued for the case's subscriber connections (connz out_msgs) that their clients had not parsed yet (nats.go InMsgs on that connection): " +
		"in the server's output buffer, the kernels' socket buffers or on the link; in_sockets: at least this many of them had left the output buffer (connz pending_bytes, in whole messages, still counts a write under way)"}
	conns, err := connz(ctx, ep)
	if err != nil {
		return h, err
	}
	prefix := subscriberConnPrefix(c)
	newest := map[string]connzConn{} // a name's older connection (lost, not yet closed by the server) holds nothing that will arrive
	for _, cn := range conns {
		if strings.HasPrefix(cn.Name, prefix) && cn.CID >= newest[cn.Name].CID {
			newest[cn.Name] = cn
		}
	}
	// A subscriber whose newest connection the server has closed (a slow
	// consumer, a write deadline, a stale connection), while its client,
	// behind a stalled link, has not noticed yet: what the server queued
	// for it and the client has not parsed went with the connection. A
	// connection the server is still tearing down (its last write waits
	// for the write deadline) is in both lists.
	closed, err := connz(ctx, ep, "state", "closed", "subs", "0")
	if err != nil {
		return h, err
	}
	gone := map[string]connzConn{}
	for _, cn := range closed {
		if strings.HasPrefix(cn.Name, prefix) && cn.CID >= newest[cn.Name].CID && cn.CID >= gone[cn.Name].CID {
			gone[cn.Name] = cn
		}
	}
	for _, cn := range closed {
		if strings.HasPrefix(cn.Name, prefix) && cn.CID != gone[cn.Name].CID {
			h.ReplacedReasons = countReason(h.ReplacedReasons, cn.Reason)
		}
	}
	for name, cn := range gone {
		delete(newest, name)
		h.ClosedByServer++
		h.ClosedReasons = countReason(h.ClosedReasons, cn.Reason)
		if got, ok := parsed(name); ok {
			h.Queued += cn.OutMsgs
			h.Parsed += int64(got)
		}
	}
	unknown := 0
	for name, cn := range newest {
		inServer := cn.messagesIn(cn.Pending, c.Factors.Size)
		got, ok := parsed(name)
		if !ok {
			unknown++
			h.Backlog += inServer
			continue
		}
		h.Queued += cn.OutMsgs
		h.Parsed += int64(got)
		onTheirWay := max(cn.OutMsgs-int64(got), 0)
		h.Backlog += onTheirWay
		h.InSockets += max(onTheirWay-inServer, 0)
	}
	if unknown > 0 {
		h.Source += fmt.Sprintf("; %d connection(s) without an open subscriber of this driver: their output buffers only", unknown)
	}
	return h, nil
}

// messagesIn is how many messages n bytes of the connection's output
// hold: whole MSG frames ("MSG <subject> <sid> <size>\r\n<payload>\r\n")
// of the connection's mean payload so far (size before it has sent any),
// with its longest subject and sid. A frame partly read by the client
// counts as not held: its head has arrived.
func (cn connzConn) messagesIn(n int64, size int) int64 {
	if n <= 0 {
		return 0
	}
	payload := int64(size)
	if cn.OutMsgs > 0 {
		payload = cn.OutBytes / cn.OutMsgs
	}
	subject := 0
	for _, s := range cn.Subs {
		subject = max(subject, len(s))
	}
	sid := len(strconv.Itoa(max(cn.NumSubs, 1)))
	frame := int64(len("MSG ")+subject+1+sid+1+len(strconv.FormatInt(payload, 10))+len("\r\n\r\n")) + payload
	return n / frame
}

// connz reads every open connection of the server's /connz, page by page
// (extra narrows the question, e.g. to one cid).
func connz(ctx context.Context, ep driver.Endpoint, extra ...string) ([]connzConn, error) {
	dial := (&net.Dialer{}).DialContext
	if d := ep.Admin().Dialer; d != nil {
		dial = d.DialContext
	}
	tr := &http.Transport{DialContext: dial, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var all []connzConn
	for offset := 0; ; {
		q := url.Values{"subs": {"1"}, "offset": {strconv.Itoa(offset)}, "limit": {strconv.Itoa(connzPageSize)}}
		for i := 0; i+1 < len(extra); i += 2 {
			q.Set(extra[i], extra[i+1])
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ep.MonitorURL+"/connz?"+q.Encode(), nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("connz: %w", err)
		}
		var page connzPage
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("connz: %s", resp.Status)
		}
		if err != nil {
			return nil, fmt.Errorf("connz: %w", err)
		}
		all = append(all, page.Conns...)
		offset += len(page.Conns)
		if len(page.Conns) == 0 || offset >= page.Total {
			return all, nil
		}
	}
}
