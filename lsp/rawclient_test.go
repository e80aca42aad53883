package lsp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawClient speaks LSP as bytes, to send what a real client library would
// refuse to (bad JSON, wrong types, huge frames) and to see exactly what
// comes back. It answers the server's own requests (progress tokens,
// registrations) with null.
type rawClient struct {
	t    *testing.T
	conn net.Conn

	wmu      sync.Mutex // serialises writes (never held with mu)
	mu       sync.Mutex // guards the fields below
	nextID   int
	pending  map[string]chan map[string]any
	notes    []map[string]any
	noteCh   chan struct{}
	nullID   []map[string]any // responses without an id
	readDone chan struct{}
}

func newRawClient(t *testing.T, conn net.Conn) *rawClient {
	c := &rawClient{t: t, conn: conn, pending: map[string]chan map[string]any{}, noteCh: make(chan struct{}), readDone: make(chan struct{}), nextID: 100}
	go c.read()
	return c
}

func (c *rawClient) writeFrame(body []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := fmt.Fprintf(c.conn, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		c.t.Logf("write: %v", err)
	}
}

func (c *rawClient) writeRaw(b []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, _ = c.conn.Write(b)
}

func (c *rawClient) read() {
	defer close(c.readDone)
	r := bufio.NewReader(c.conn)
	for {
		n := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			c.t.Errorf("server sent invalid JSON: %s", body)
			return
		}
		_, hasMethod := m["method"]
		id, hasID := m["id"]
		switch {
		case hasMethod && hasID: // server → client request
			resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": nil})
			// Not on the read loop: on a synchronous pipe the server may
			// be writing to us while we write to it.
			go c.writeFrame(resp)
		case hasMethod:
			c.mu.Lock()
			c.notes = append(c.notes, m)
			close(c.noteCh)
			c.noteCh = make(chan struct{})
			c.mu.Unlock()
		default:
			key := fmt.Sprint(id)
			c.mu.Lock()
			if id == nil {
				c.nullID = append(c.nullID, m)
				close(c.noteCh)
				c.noteCh = make(chan struct{})
			}
			ch := c.pending[key]
			delete(c.pending, key)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

// call sends a request with raw params and waits for its response.
func (c *rawClient) call(method string, params any) map[string]any {
	c.t.Helper()
	return c.callID(0, method, params)
}

func (c *rawClient) callID(id int, method string, params any) map[string]any {
	c.t.Helper()
	ch := c.send(id, method, params)
	select {
	case m := <-ch:
		return m
	case <-time.After(30 * time.Second):
		c.t.Fatalf("no response to %s", method)
		return nil
	}
}

func (c *rawClient) send(id int, method string, params any) chan map[string]any {
	c.mu.Lock()
	if id == 0 {
		c.nextID++
		id = c.nextID
	}
	ch := make(chan map[string]any, 1)
	c.pending[fmt.Sprint(float64(id))] = ch
	c.mu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, _ := json.Marshal(msg)
	c.writeFrame(b)
	return ch
}

// callRaw sends body (a complete JSON-RPC request with the given id) and
// waits for the response with that id.
func (c *rawClient) callRaw(id int, body string) map[string]any {
	c.t.Helper()
	c.mu.Lock()
	ch := make(chan map[string]any, 1)
	c.pending[fmt.Sprint(float64(id))] = ch
	c.mu.Unlock()
	c.writeFrame([]byte(body))
	select {
	case m := <-ch:
		return m
	case <-time.After(30 * time.Second):
		c.t.Fatalf("no response to %s", body)
		return nil
	}
}

// expect registers interest in the response with the given id, for a
// request written with writeRaw; await then waits for it.
func (c *rawClient) expect(id int) chan map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan map[string]any, 1)
	c.pending[fmt.Sprint(float64(id))] = ch
	return ch
}

func (c *rawClient) await(ch chan map[string]any, what string) map[string]any {
	c.t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(30 * time.Second):
		c.t.Fatalf("no response to %s", what)
		return nil
	}
}

// nulls returns the responses without id received so far.
func (c *rawClient) nulls() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]map[string]any(nil), c.nullID...)
}

func (c *rawClient) notify(method string, params any) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, _ := json.Marshal(msg)
	c.writeFrame(b)
}

// awaitNull waits for the n-th response without id (answers to messages
// that could not be decoded).
func (c *rawClient) awaitNull(n int) map[string]any {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		if len(c.nullID) >= n {
			m := c.nullID[n-1]
			c.mu.Unlock()
			return m
		}
		ch := c.noteCh
		c.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			c.t.Fatalf("no error response for an undecodable message")
		}
	}
}

// awaitNote waits for a notification satisfying pred.
func (c *rawClient) awaitNote(what string, pred func(m map[string]any) bool) map[string]any {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	seen := 0
	for {
		c.mu.Lock()
		notes := c.notes[seen:]
		seen = len(c.notes)
		ch := c.noteCh
		c.mu.Unlock()
		for _, m := range notes {
			if pred(m) { // without the lock: pred may look at the client
				return m
			}
		}
		select {
		case <-ch:
		case <-deadline:
			c.t.Fatalf("no notification: %s", what)
		}
	}
}

func errCode(m map[string]any) int {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0
	}
	return int(e["code"].(float64))
}

func errMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

var _ = context.Background
