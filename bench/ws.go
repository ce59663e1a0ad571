package bench

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	takows "github.com/tako-mcp/tako/websocket"
)

// wsTransport is WebSocket through tako's bridge (servers/bridge -ws, a
// fresh stdio backend per client). The go-sdk and mcp-go have no WebSocket
// client, so the floor is a hand-written one over gorilla/websocket frames.
var wsTransport = &Transport{
	Name: "ws",
	Serve: func(ctx context.Context, bins Bins, tools int) (*Endpoint, error) {
		srv, err := startServerProcess(ctx, bins.Bridge, bridgeArgs(bins, tools, "-ws", "127.0.0.1:0"), "ws://127.0.0.1:")
		if err != nil {
			return nil, err
		}
		return &Endpoint{URL: srv.url, Conns: srv.conns, close: srv.Close}, nil
	},
	kinds: []kind{
		{"floor", startFloorWS},
		{"tako", startTakoWS},
	},
}

func bridgeArgs(bins Bins, tools int, args ...string) []string {
	args = append([]string{"-backend", bins.GoSDK}, args...)
	if tools > 0 {
		args = append(args, "-tools", strconv.Itoa(tools))
	}
	return args
}

func startTakoWS(ctx context.Context, ep *Endpoint) (client, error) {
	conn, err := takows.Dial(ctx, ep.URL, nil)
	if err != nil {
		return nil, err
	}
	return connectTako(ctx, conn)
}

// startFloorWS is the stdio floor with frames for lines: WriteJSON of each
// message (one text frame), one reader goroutine that reads each frame
// whole and unmarshals it, the same pending map. Subprotocol "mcp", as
// tako's bridge asks.
func startFloorWS(ctx context.Context, ep *Endpoint) (client, error) {
	d := websocket.Dialer{Subprotocols: []string{"mcp"}, HandshakeTimeout: 30 * time.Second}
	ws, _, err := d.DialContext(ctx, ep.URL, nil)
	if err != nil {
		return nil, err
	}
	c := newFloorClient()
	c.send = ws.WriteJSON
	c.stop = func() error {
		c.wmu.Lock()
		err := ws.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		c.wmu.Unlock()
		// The bridge answers the close frame and ends the connection,
		// which ends the reader; a peer that does not is cut off.
		select {
		case <-c.done:
		case <-time.After(2 * time.Second):
		}
		return errors.Join(err, ws.Close())
	}
	go func() {
		defer close(c.done)
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				c.readErr = err
				return
			}
			var resp floorResponse
			if err := json.Unmarshal(data, &resp); err != nil {
				c.readErr = err
				return
			}
			c.deliver(resp)
		}
	}()
	return c.initialize(ctx)
}
